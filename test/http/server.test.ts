// Integration tests of /healthz, /readyz, /metrics and the fallbacks, over a real socket on 127.0.0.1:0.
import { request, type IncomingHttpHeaders, type Server } from "node:http";
import pino from "pino";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAccessPolicy } from "../../src/http/access.js";
import { createHttpServer, listen } from "../../src/http/server.js";
import { createMetrics, type Metrics } from "../../src/metrics.js";

/** Parse Prometheus text exposition into samples, failing on any line that is not HELP, TYPE or a sample. */
function parsePrometheus(text: string): { name: string; labels: string; value: number }[] {
  const samples: { name: string; labels: string; value: number }[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (/^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$/.test(line)) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not Prometheus text: ${line}`);
    samples.push({ name: match[1]!, labels: match[2] ?? "", value: Number(match[3]) });
  }
  return samples;
}

const loopback = createAccessPolicy({ host: "127.0.0.1", allowedHosts: [], allowedOrigins: [] });

/** One request with exactly these headers (fetch would not send a foreign Host). */
function rawRequest(
  port: number,
  path: string,
  options: { readonly method?: string; readonly headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, method: options.method ?? "GET", headers: options.headers ?? {} },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("HTTP endpoints", () => {
  let server: Server;
  let metrics: Metrics;
  let base: string;
  let readiness = { ready: false, reasons: ["first poll of offchain:BTC/USD pending"] };

  beforeEach(async () => {
    metrics = createMetrics(new Registry());
    server = createHttpServer({
      metrics,
      readiness: () => readiness,
      logger: pino({ level: "silent" }),
      access: loopback,
      maxConnections: 100,
      nowMs: steppingClock(),
    });
    const { port } = await listen(server, "127.0.0.1", 0);
    base = `http://127.0.0.1:${port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("answers /healthz with ok", async () => {
    const response = await fetch(`${base}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
  });

  it("answers /readyz with 503 and the reasons until ready, then 200", async () => {
    const notReady = await fetch(`${base}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({
      status: "not_ready",
      reasons: ["first poll of offchain:BTC/USD pending"],
    });
    readiness = { ready: true, reasons: [] };
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready" });
  });

  it("serves /metrics as Prometheus text", async () => {
    metrics.wsRejected.inc({ reason: "unauthorized" });
    metrics.wsClients.set(3);
    const response = await fetch(`${base}/metrics?x=1`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(metrics.registry.contentType);
    const samples = parsePrometheus(await response.text());
    expect(samples).toContainEqual({ name: "pragma_monitor_ws_clients", labels: "", value: 3 });
    expect(samples).toContainEqual({
      name: "pragma_monitor_ws_rejected_total",
      labels: '{reason="unauthorized"}',
      value: 1,
    });
    // prom-client's defaults under their usual names (stock Node.js dashboards), minus the `_total` gauges
    expect(samples.some((sample) => sample.name === "process_cpu_seconds_total")).toBe(true);
    expect(samples.some((sample) => sample.name === "nodejs_eventloop_lag_p99_seconds")).toBe(true);
    expect(samples.some((sample) => sample.name === "nodejs_active_handles")).toBe(true);
    expect(samples.filter((sample) => /^pragma_monitor_(process|nodejs)_/.test(sample.name))).toEqual([]);
    expect(samples.filter((sample) => /^nodejs_active_\w+_total$/.test(sample.name))).toEqual([]);
  });

  it("answers unknown paths with 404 JSON and other methods with 405", async () => {
    const missing = await fetch(`${base}/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: "not_found" });
    const post = await fetch(`${base}/healthz`, { method: "POST", body: "{}" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    await post.arrayBuffer();
  });

  it("answers HEAD /healthz and HEAD /readyz like GET, without a body (health probes use HEAD)", async () => {
    const port = Number(new URL(base).port);
    readiness = { ready: false, reasons: ["pending"] };
    const health = await rawRequest(port, "/healthz", { method: "HEAD" });
    expect(health.status).toBe(200);
    expect(health.body).toBe("");
    expect(Number(health.headers["content-length"])).toBeGreaterThan(0);
    expect((await rawRequest(port, "/readyz", { method: "HEAD" })).status).toBe(503);
    readiness = { ready: true, reasons: [] };
    expect((await rawRequest(port, "/readyz", { method: "HEAD" })).status).toBe(200);
  });

  it.each([
    ["rebind.evil.example:8787", 403],
    ["evil.example", 403],
    ["127.0.0.1.evil.example", 403],
    ["localhost:8787", 200],
    ["127.0.0.1:1", 200],
    ["[::1]:8787", 200],
    ["LOCALHOST", 200],
  ])("bound to loopback, Host %s on every path gets %i (DNS rebinding)", async (host, status) => {
    const port = Number(new URL(base).port);
    for (const path of ["/healthz", "/metrics", "/nope"]) {
      const response = await rawRequest(port, path, { headers: { Host: host } });
      expect(response.status === 404 ? 200 : response.status).toBe(status);
      if (status === 403) expect(JSON.parse(response.body)).toMatchObject({ error: "forbidden_host" });
    }
    const samples = parsePrometheus(await (await fetch(`${base}/metrics`)).text());
    const refused = samples.find((s) => s.name === "pragma_monitor_http_rejected_total");
    expect(refused?.value ?? 0).toBe(status === 403 ? 3 : 0);
  });

  it("protects /metrics with server.metricsToken, and only /metrics", async () => {
    const guarded = createHttpServer({
      metrics,
      readiness: () => readiness,
      logger: pino({ level: "silent" }),
      access: loopback,
      metricsToken: "scrape-s3cret",
      maxConnections: 100,
      nowMs: steppingClock(),
    });
    const { port } = await listen(guarded, "127.0.0.1", 0);
    try {
      const anonymous = await rawRequest(port, "/metrics");
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers["www-authenticate"]).toMatch(/^Bearer/);
      expect((await rawRequest(port, "/metrics", { headers: { Authorization: "Bearer nope" } })).status).toBe(
        401,
      );
      const scraped = await rawRequest(port, "/metrics", {
        headers: { Authorization: "Bearer scrape-s3cret" },
      });
      expect(scraped.status).toBe(200);
      expect(scraped.body).toContain("pragma_monitor_http_rejected_total");
      expect((await rawRequest(port, "/healthz")).status).toBe(200);
    } finally {
      guarded.closeAllConnections();
      await new Promise<void>((resolve) => guarded.close(() => resolve()));
    }
  });

  it("rejects listen on a port already in use", async () => {
    const port = Number(new URL(base).port);
    const other = createHttpServer({
      metrics,
      readiness: () => readiness,
      logger: pino({ level: "silent" }),
      access: loopback,
      maxConnections: 100,
      nowMs: steppingClock(),
    });
    await expect(listen(other, "127.0.0.1", port)).rejects.toMatchObject({
      code: "PM_ERR_LISTEN",
      message: expect.stringContaining("already in use by another process") as unknown,
      cause: { code: "EADDRINUSE" },
    });
  });
});

/** A clock a minute further on each read: every scrape renders afresh (the 1 s cache has its own test). */
function steppingClock(): () => number {
  let nowMs = 0;
  return () => (nowMs += 60_000);
}
