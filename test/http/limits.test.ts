// Tests of the HTTP server's flood limits: connection cap, shared /metrics render, pipelined backpressure.
import { connect, type Socket } from "node:net";
import type { Server } from "node:http";
import pino from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { createAccessPolicy } from "../../src/http/access.js";
import { HTTP_LIMITS, createHttpServer, createMetricsCache, listen } from "../../src/http/server.js";
import { createMetrics, type Metrics } from "../../src/metrics.js";
import { waitFor } from "../wait-for.js";

const loopback = createAccessPolicy({ host: "127.0.0.1", allowedHosts: [], allowedOrigins: [] });

describe("createMetricsCache", () => {
  it("renders once per cache period, shared by concurrent scrapes, and retries after a failed render", async () => {
    let renders = 0;
    let fail = false;
    const registry = {
      metrics: () => {
        renders += 1;
        return fail ? Promise.reject(new Error("boom")) : Promise.resolve(`render ${renders}`);
      },
    } as unknown as Registry; // only metrics() is used
    let nowMs = 0;
    const render = createMetricsCache({ registry }, () => nowMs, 1_000);
    const table: { atMs: number; expected: string; renders: number }[] = [
      { atMs: 0, expected: "render 1", renders: 1 },
      { atMs: 999, expected: "render 1", renders: 1 },
      { atMs: 1_000, expected: "render 2", renders: 2 },
      { atMs: 1_500, expected: "render 2", renders: 2 },
    ];
    for (const row of table) {
      nowMs = row.atMs;
      const [a, b] = await Promise.all([render(), render()]);
      expect([a, b, renders]).toEqual([row.expected, row.expected, row.renders]);
    }
    nowMs = 3_000;
    fail = true;
    await expect(render()).rejects.toThrow("boom");
    fail = false;
    await expect(render()).resolves.toBe("render 4");
  });
});

describe("HTTP limits", () => {
  let server: Server | undefined;
  const sockets: Socket[] = [];

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    if (server !== undefined) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server?.close(() => resolve()));
    }
    server = undefined;
  });

  const start = async (maxConnections: number): Promise<{ port: number; metrics: Metrics }> => {
    const metrics = createMetrics(new Registry());
    server = createHttpServer({
      metrics,
      readiness: () => ({ ready: true, reasons: [] }),
      logger: pino({ level: "silent" }),
      access: loopback,
      maxConnections,
      nowMs: Date.now,
    });
    const { port } = await listen(server, "127.0.0.1", 0);
    return { port, metrics };
  };

  const open = (port: number): Promise<Socket> =>
    new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => resolve(socket));
      socket.once("error", reject);
      sockets.push(socket);
    });

  it("closes connections beyond server.maxConnections at once and counts them", async () => {
    const { port, metrics } = await start(2);
    await open(port);
    await open(port);
    const third = await open(port);
    await new Promise((resolve) => third.once("close", resolve));
    const rejected = await metrics.registry.getSingleMetricAsString("pragma_monitor_http_rejected_total");
    expect(rejected).toContain('pragma_monitor_http_rejected_total{reason="max_connections"} 1');
  });

  it("closes a connection pipelining more scrapes than maxWaitingPerSocket without reading, and counts it", async () => {
    const { port, metrics } = await start(10);
    const socket = await open(port);
    socket.pause(); // never read the answers
    socket.write(
      "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(HTTP_LIMITS.maxWaitingPerSocket * 4),
    );
    await new Promise((resolve) => socket.once("close", resolve));
    const rejected = await metrics.registry.getSingleMetricAsString("pragma_monitor_http_rejected_total");
    expect(rejected).toContain('pragma_monitor_http_rejected_total{reason="pipelining"} 1');
  });

  it("answers a few pipelined scrapes in order (within maxWaitingPerSocket)", async () => {
    const { port } = await start(10);
    const socket = await open(port);
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.write("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(HTTP_LIMITS.maxWaitingPerSocket));
    await waitFor(
      () => expect(received.split("HTTP/1.1 200 OK").length - 1).toBe(HTTP_LIMITS.maxWaitingPerSocket),
      {
        timeout: 5_000,
      },
    );
    expect(socket.destroyed).toBe(false);
  });

  /** What the server sent on `socket` until the connection closed, and how long after its last byte it closed. */
  const readUntilClosed = (socket: Socket): Promise<{ text: string; closedAfterMs: number }> =>
    new Promise((resolve) => {
      let text = "";
      let lastByteAtMs = performance.now();
      socket.setEncoding("utf8");
      // a reset (a connection closed with input unread) still lets the test read what arrived before it
      socket.on("error", () => undefined);
      socket.on("data", (chunk: string) => {
        text += chunk;
        lastByteAtMs = performance.now();
      });
      socket.once("close", () => resolve({ text, closedAfterMs: performance.now() - lastByteAtMs }));
    });

  const HEALTHZ = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  /** Enough that some are still unread when the last answer is written (1 100 were all read before it). */
  const PIPELINED_PAST_LIMIT = 3 * HTTP_LIMITS.maxRequestsPerSocket;
  const count = (text: string, part: string): number => text.split(part).length - 1;

  it("closes a keep-alive connection as soon as its maxRequestsPerSocket-th answer is written", async () => {
    const { port } = await start(10);
    const socket = await open(port);
    const closed = readUntilClosed(socket);
    // one request at a time, each sent once the one before is answered, as a keep-alive client does
    let sent = 0;
    let answered = 0;
    let text = "";
    socket.on("data", (chunk: string) => {
      text += chunk;
      answered = count(text, '{"status":"ok"}');
      if (answered === sent && sent < HTTP_LIMITS.maxRequestsPerSocket) {
        sent++;
        socket.write(HEALTHZ);
      }
    });
    sent = 1;
    socket.write(HEALTHZ);
    const { closedAfterMs } = await closed;
    expect(answered).toBe(HTTP_LIMITS.maxRequestsPerSocket);
    // the last answer says so; node alone said so too but kept the socket until keep-alive ended (5 s)
    const last = text.slice(text.lastIndexOf("HTTP/1.1 200 OK"));
    expect(last).toMatch(/\r\nConnection: close\r\n/i);
    expect(count(text, "Connection: close")).toBe(1);
    expect(closedAfterMs).toBeLessThan(HTTP_LIMITS.keepAliveTimeoutMs / 5);
  });

  it("answers at most maxRequestsPerSocket pipelined requests on one connection, then closes it", async () => {
    const { port } = await start(10);
    const socket = await open(port);
    const closed = readUntilClosed(socket);
    // a few past the limit (far more: below)
    socket.write(HEALTHZ.repeat(HTTP_LIMITS.maxRequestsPerSocket + 20));
    const { text, closedAfterMs } = await closed;
    expect(count(text, "HTTP/1.1 200 OK")).toBe(HTTP_LIMITS.maxRequestsPerSocket);
    // the rest is not answered at all (a client retries unanswered pipelined requests on a new connection)
    expect(count(text, "HTTP/1.1 ")).toBe(HTTP_LIMITS.maxRequestsPerSocket);
    expect(closedAfterMs).toBeLessThan(HTTP_LIMITS.keepAliveTimeoutMs / 5);
  });

  it("delivers every answer to a client pipelining far past maxRequestsPerSocket, then ends the connection cleanly", async () => {
    const { port } = await start(10);
    const socket = await open(port);
    let text = "";
    let ended = false;
    let failure: Error | undefined;
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("end", () => (ended = true));
    // a reset after the end of stream (the client's own end still queued behind requests node stopped reading) loses
    // nothing: every answer was read by then
    socket.on("error", (error) => {
      if (!ended) failure = error;
    });
    socket.write(HEALTHZ.repeat(PIPELINED_PAST_LIMIT));
    await new Promise((resolve) => socket.once("close", resolve));
    // closed at once with the requests past the limit unread, the connection was reset: 364 to 498 answers arrived
    expect(failure).toBeUndefined();
    expect(ended).toBe(true);
    expect(count(text, '{"status":"ok"}')).toBe(HTTP_LIMITS.maxRequestsPerSocket);
    expect(count(text, "HTTP/1.1 ")).toBe(HTTP_LIMITS.maxRequestsPerSocket);
  });

  it("closes within lingerMs a connection whose client keeps its side open after the last answer", async () => {
    const { port } = await start(10);
    const socket = await new Promise<Socket>((resolve) => {
      const opened = connect({ port, host: "127.0.0.1", allowHalfOpen: true }, () => resolve(opened));
      sockets.push(opened);
    });
    const ended = new Promise((resolve) => socket.once("end", resolve));
    socket.resume();
    socket.write(HEALTHZ.repeat(HTTP_LIMITS.maxRequestsPerSocket));
    await ended;
    const endedAtMs = performance.now();
    const connections = (): Promise<number> =>
      new Promise((resolve, reject) =>
        server?.getConnections((error, n) => (error ? reject(error) : resolve(n))),
      );
    expect(await connections()).toBe(1); // lingering: the client may still be sending
    await waitFor(async () => expect(await connections()).toBe(0), {
      timeout: HTTP_LIMITS.lingerMs + 1_000,
      interval: 20,
    });
    // the server's linger started before the end of stream reached the client: a margin for a loaded machine
    expect(performance.now() - endedAtMs).toBeGreaterThanOrEqual(HTTP_LIMITS.lingerMs - 500);
  });

  it("runs no HTTP/1.0 request pipelined past maxRequestsPerSocket (node limits only HTTP/1.1)", async () => {
    const { port, metrics } = await start(10);
    const socket = await open(port);
    const closed = readUntilClosed(socket);
    const http10 = (host: string): string =>
      `GET /healthz HTTP/1.0\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`;
    // the requests past the limit would be refused for their Host header, and counted, if they ran
    socket.write(
      http10("127.0.0.1").repeat(HTTP_LIMITS.maxRequestsPerSocket) + http10("evil.example").repeat(5),
    );
    const { text } = await closed;
    expect(count(text, '{"status":"ok"}')).toBe(HTTP_LIMITS.maxRequestsPerSocket);
    const rejected = await metrics.registry.getSingleMetricAsString("pragma_monitor_http_rejected_total");
    expect(rejected).not.toContain('reason="host"');
  });

  it("stops parsing HTTP/1.0 requests pipelined past maxRequestsPerSocket while the connection lingers", async () => {
    const { port } = await start(10);
    let parsed = 0;
    server?.on("request", () => parsed++);
    const socket = await open(port);
    const closed = readUntilClosed(socket);
    const http10 = "GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n";
    socket.write(http10.repeat(10 * HTTP_LIMITS.maxRequestsPerSocket));
    const { text } = await closed;
    expect(count(text, '{"status":"ok"}')).toBe(HTTP_LIMITS.maxRequestsPerSocket);
    // the unsent 503s of those past the limit fill node's output high-water mark, and node stops reading: without
    // them it parsed (and kept a request object for) everything the client sent until it closed (7 291 of 10 000)
    expect(parsed).toBeLessThan(4 * HTTP_LIMITS.maxRequestsPerSocket);
  });

  it("counts a request answered 417 (unmet Expect) toward maxRequestsPerSocket, as node does", async () => {
    const { port } = await start(10);
    const socket = await open(port);
    const closed = readUntilClosed(socket);
    const unmet = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: something-else\r\n\r\n";
    socket.write(unmet + HEALTHZ.repeat(HTTP_LIMITS.maxRequestsPerSocket + 4));
    const { text, closedAfterMs } = await closed;
    expect(count(text, "HTTP/1.1 417 ")).toBe(1);
    expect(count(text, "HTTP/1.1 200 OK")).toBe(HTTP_LIMITS.maxRequestsPerSocket - 1);
    // nothing past the limit is answered (a count behind node's let node answer 503 to those, the connection open)
    expect(count(text, "HTTP/1.1 ")).toBe(HTTP_LIMITS.maxRequestsPerSocket);
    expect(text.slice(text.lastIndexOf("HTTP/1.1 200 OK"))).toMatch(/\r\nConnection: close\r\n/i);
    expect(closedAfterMs).toBeLessThan(HTTP_LIMITS.keepAliveTimeoutMs / 5);
  });

  it("closes a connection that sends no headers within headersTimeoutMs (to within timeoutCheckMs)", async () => {
    const { port } = await start(10);
    const openedAtMs = performance.now();
    const socket = await open(port);
    const { text } = await readUntilClosed(socket);
    const closedAtMs = performance.now() - openedAtMs;
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAtMs).toBeGreaterThanOrEqual(HTTP_LIMITS.headersTimeoutMs - 50);
    // node checks every 30 s unless told otherwise: such a connection lived 30 s
    expect(closedAtMs).toBeLessThan(HTTP_LIMITS.headersTimeoutMs + HTTP_LIMITS.timeoutCheckMs + 500);
  }, 20_000);
});
