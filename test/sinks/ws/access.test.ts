// WebSocket upgrade access (Origin, Host, token) and the smaller protocol promises: request ids, rule ids, logs.
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { AlertPayload } from "../../../src/domain/events.js";
import { alert, connect, metricValue, refusedStatus, startHarness, until, type Harness } from "./harness.js";

/** A logger whose lines a test can read as objects. */
function captureLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "debug" },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { logger, lines };
}

describe("WebSocket upgrade access", () => {
  let harness: Harness;
  afterEach(async () => {
    await harness.close();
  });

  it("refuses a foreign Origin and a rebinding Host with 403, counted by reason, and accepts non-browser clients", async () => {
    const { logger, lines } = captureLogger();
    harness = await startHarness({}, { logger });
    // the probe: Origin http://evil.example, Host rebind.evil.example:8787
    const rebinding = { headers: { Origin: "http://evil.example", Host: "rebind.evil.example:8787" } };
    expect(await refusedStatus(harness.url, rebinding)).toBe(403);
    expect(await refusedStatus(harness.url, { origin: "http://evil.example" })).toBe(403);
    expect(await refusedStatus(harness.url, { origin: "http://127.0.0.1:1" })).toBe(403);
    expect(await refusedStatus(harness.url, { origin: "null" })).toBe(403);
    expect(await metricValue(harness.metrics.wsRejected, { reason: "host" })).toBe(1);
    expect(await metricValue(harness.metrics.wsRejected, { reason: "origin" })).toBe(3);
    expect(harness.ws.clientCount()).toBe(0);

    const cli = await connect(harness.url);
    const ownPage = await connect(harness.url, { origin: `http://127.0.0.1:${harness.port}` });
    const viaLocalhost = await connect(`ws://localhost:${harness.port}/ws`, {
      origin: `http://localhost:${harness.port}`,
    });
    for (const client of [cli, ownPage, viaLocalhost]) expect(client.frames[0]?.type).toBe("hello");

    // four refusals in one burst: one line at once, the rest summarised later, never one per attempt
    const refusals = lines.filter((line) => String(line["msg"]).startsWith("refused WebSocket upgrade"));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({
      level: 40,
      reason: "host",
      count: 1,
      host: "rebind.evil.example:8787",
    });
  });

  it("accepts an Origin listed in server.allowedOrigins and a Host in server.allowedHosts", async () => {
    harness = await startHarness({
      allowedOrigins: ["https://dash.example.com"],
      allowedHosts: ["monitor.internal"],
    });
    const listed = await connect(harness.url, { origin: "https://dash.example.com" });
    expect(listed.frames[0]?.type).toBe("hello");
    const named = await connect(harness.url, { headers: { Host: "monitor.internal:8787" } });
    expect(named.frames[0]?.type).toBe("hello");
    expect(await refusedStatus(harness.url, { origin: "https://other.example.com" })).toBe(403);
  });

  it("logs failed token authentication once per burst, with the count of the burst", async () => {
    const { logger, lines } = captureLogger();
    harness = await startHarness({ token: "s3cret" }, { logger });
    for (let i = 0; i < 5; i++) expect(await refusedStatus(harness.url)).toBe(401);
    expect(await metricValue(harness.metrics.wsRejected, { reason: "unauthorized" })).toBe(5);
    const authLines = () => lines.filter((line) => String(line["msg"]).includes("missing or wrong token"));
    expect(authLines()).toHaveLength(1);
    expect(authLines()[0]).toMatchObject({ level: 40, count: 1 });
    expect(JSON.stringify(lines)).not.toContain("s3cret");
    // the shutdown flushes the burst's summary line
    await harness.ws.close(1000);
    expect(authLines()).toHaveLength(2);
    expect(authLines()[1]).toMatchObject({ level: 40, count: 4 });
  });
});

describe("WebSocket protocol promises", () => {
  let harness: Harness;
  afterEach(async () => {
    await harness.close();
  });

  it("echoes the message id on rate_limited error frames", async () => {
    const frozenMs = 1_000; // no refill: every message beyond the burst is over the rate
    harness = await startHarness({ messagesPerSecond: 2 }, { nowMs: () => frozenMs });
    const client = await connect(harness.url);
    for (const id of ["a", "b", "c", 42]) client.send({ op: "ping", id });
    client.send("not json");
    await until(() => client.frames.filter((frame) => frame.type === "error").length === 3);
    const errors = client.frames.filter((frame) => frame.type === "error");
    expect(errors.map((frame) => [frame["code"], frame["id"]])).toEqual([
      ["rate_limited", "c"],
      ["rate_limited", 42],
      ["rate_limited", null],
    ]);
  });

  it("closes a text frame that is not valid UTF-8 with 1007, as documented", async () => {
    harness = await startHarness();
    const client = await connect(harness.url);
    client.socket.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    expect(await client.closed).toMatchObject({ code: 1007 });
  });

  it("filters by rule id as well as rule kind, like sink filters", async () => {
    harness = await startHarness({}, { rules: ["price_change", "stale_price", "price_change_10s"] });
    const byId = await connect(harness.url);
    const byKind = await connect(harness.url);
    const subscribed = await byId.request({ op: "subscribe", id: "1", rules: ["price_change_10s"] });
    expect(subscribed).toMatchObject({ type: "subscribed", rules: ["price_change_10s"] });
    await byKind.request({ op: "subscribe", id: "1", rules: ["price_change"] });
    const withId = (payload: AlertPayload, ruleId: string): AlertPayload => ({
      ...payload,
      labels: { ...payload.labels, rule_id: ruleId },
    });
    harness.hub.publishAlert(withId(alert({ summary: "10s window" }), "price_change_10s"));
    harness.hub.publishAlert(withId(alert({ summary: "1h window" }), "price_change_1h"));
    harness.hub.publishAlert(alert({ summary: "default id" }));
    harness.hub.publishAlert(alert({ rule: "stale_price", summary: "stale" }));
    await byKind.next((frame) => frame.type === "alert" && JSON.stringify(frame).includes("default id"));
    await byId.request({ op: "ping", id: "sync" });
    const summaries = (frames: readonly Record<string, unknown>[]) =>
      frames
        .filter((frame) => frame["type"] === "alert")
        .map((frame) => (frame["alert"] as AlertPayload).summary);
    expect(summaries(byId.frames)).toEqual(["10s window"]);
    expect(summaries(byKind.frames)).toEqual(["10s window", "1h window", "default id"]);
  });
});
