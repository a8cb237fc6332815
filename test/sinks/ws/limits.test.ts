// Integration tests of the WebSocket server's limits, auth, heartbeat, shutdown and single serialisation.
import { Socket } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import type { TestClient } from "./harness.js";
import { alert, connect, metricValue, refusedStatus, startHarness, until, type Harness } from "./harness.js";

const underlyingSocket = (client: TestClient): Socket =>
  (client.socket as unknown as { _socket: Socket })._socket;

describe("WebSocket limits and lifecycle", () => {
  let harness: Harness;
  afterEach(async () => {
    vi.restoreAllMocks();
    await harness.close();
  });

  it("answers messages over the rate with rate_limited, then closes a sustained flood with 1008", async () => {
    const frozenMs = 1_000; // no refill: every message beyond the burst is over the rate
    harness = await startHarness({ messagesPerSecond: 5 }, { nowMs: () => frozenMs });
    const client = await connect(harness.url);
    for (let i = 0; i < 40; i++) client.send({ op: "ping", id: i });
    const limited = await client.next((frame) => frame.type === "error");
    expect(limited).toMatchObject({ code: "rate_limited" });
    expect(client.frames.filter((frame) => frame.type === "pong")).toHaveLength(5);
    expect(await client.closed).toMatchObject({ code: 1008 });
    expect(await metricValue(harness.metrics.wsRejected, { reason: "flood" })).toBe(1);
  });

  it("closes a client sending an oversized message with 1009", async () => {
    harness = await startHarness({ maxMessageBytes: 1024 });
    const client = await connect(harness.url);
    client.send({ op: "ping", id: "x".repeat(2048) });
    expect(await client.closed).toMatchObject({ code: 1009 });
    expect(await metricValue(harness.metrics.wsRejected, { reason: "too_large" })).toBe(1);
  });

  it("closes a slow consumer with 1013 without buffering past the limit", async () => {
    const maxBufferedBytes = 64 * 1024;
    harness = await startHarness({ maxBufferedBytes });
    const slow = await connect(harness.url);
    const fast = await connect(harness.url);
    await slow.request({ op: "subscribe", id: "1", channels: ["alerts"] });
    await fast.request({ op: "subscribe", id: "1", channels: ["alerts"] });
    underlyingSocket(slow).pause();
    const big = "x".repeat(16 * 1024);
    for (let i = 0; i < 5_000; i++) {
      harness.hub.publishAlert(alert({ summary: big }));
      if ((await metricValue(harness.metrics.wsSlowConsumers)) > 0) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await metricValue(harness.metrics.wsSlowConsumers)).toBe(1);
    underlyingSocket(slow).resume();
    expect(await slow.closed).toMatchObject({ code: 1013, reason: "slow consumer" });
    expect(fast.socket.readyState).toBe(WebSocket.OPEN);
    await until(() => harness.ws.clientCount() === 1);
  });

  it("refuses clients beyond maxClients at upgrade with 503", async () => {
    harness = await startHarness({ maxClients: 2 });
    await connect(harness.url);
    await connect(harness.url);
    expect(await refusedStatus(harness.url)).toBe(503);
    expect(await metricValue(harness.metrics.wsRejected, { reason: "max_clients" })).toBe(1);
    expect(await metricValue(harness.metrics.wsClients)).toBe(2);
  });

  it("requires the bearer token when configured, by header or query", async () => {
    harness = await startHarness({ token: "s3cret" });
    expect(await refusedStatus(harness.url)).toBe(401);
    expect(await refusedStatus(harness.url, { headers: { Authorization: "Bearer wrong" } })).toBe(401);
    expect(await refusedStatus(`${harness.url}?token=s3cre`)).toBe(401);
    expect(await metricValue(harness.metrics.wsRejected, { reason: "unauthorized" })).toBe(3);
    const byHeader = await connect(harness.url, { headers: { Authorization: "Bearer s3cret" } });
    const byQuery = await connect(`${harness.url}?token=s3cret`);
    expect(byHeader.frames[0]?.type).toBe("hello");
    expect(byQuery.frames[0]?.type).toBe("hello");
  });

  it("terminates a peer that misses a heartbeat pong and keeps one that answers", async () => {
    harness = await startHarness({ heartbeatMs: 40 });
    const silent = await connect(harness.url, { autoPong: false });
    const lively = await connect(harness.url);
    let pings = 0;
    const threePings = new Promise<void>((resolve) =>
      lively.socket.on("ping", () => {
        if (++pings === 3) resolve();
      }),
    );
    expect((await silent.closed).code).toBe(1006);
    await threePings;
    expect(lively.socket.readyState).toBe(WebSocket.OPEN);
    await until(() => harness.ws.clientCount() === 1);
  });

  it("delivers the stopping event, then closes every client with 1001", async () => {
    harness = await startHarness();
    const clients = [await connect(harness.url), await connect(harness.url)];
    for (const client of clients) await client.request({ op: "subscribe", id: "1", channels: ["lifecycle"] });
    harness.hub.publishLifecycle("stopping");
    await harness.ws.close(2_000);
    for (const client of clients) {
      expect(client.frames.at(-1)).toMatchObject({ type: "lifecycle", event: "stopping" });
      expect(await client.closed).toMatchObject({ code: 1001 });
    }
    expect(harness.ws.clientCount()).toBe(0);
    expect(await refusedStatus(harness.url)).toBe(404); // detached: nobody handles the upgrade any more
  });

  it("terminates clients that do not complete the close handshake by the deadline", async () => {
    harness = await startHarness();
    const stuck = await connect(harness.url);
    underlyingSocket(stuck).pause();
    const started = Date.now();
    await harness.ws.close(100);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(harness.ws.clientCount()).toBe(0);
  });

  it("serialises and frames each event once and writes the same buffer to every matching client", async () => {
    harness = await startHarness();
    const clients = [await connect(harness.url), await connect(harness.url), await connect(harness.url)];
    for (const client of clients) await client.request({ op: "subscribe", id: "1", channels: ["alerts"] });
    const send = vi.spyOn(WebSocket.prototype, "send");
    const write = vi.spyOn(Socket.prototype, "write");
    const stringify = vi.spyOn(JSON, "stringify");
    harness.hub.publishAlert(alert({ summary: "fan-out" }));
    expect(send).not.toHaveBeenCalled();
    // the clients' own sockets write nothing here; the server's write each a complete frame
    const payloads = write.mock.calls.map((call) => call[0]);
    expect(payloads).toHaveLength(3);
    expect(new Set(payloads).size).toBe(1);
    expect(stringify).toHaveBeenCalledTimes(1);
    for (const client of clients) await client.next((frame) => frame.type === "alert");
    expect(await metricValue(harness.metrics.wsMessagesOut, { type: "alert" })).toBe(3);
  });
});
