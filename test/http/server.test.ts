// Integration tests of /healthz, /readyz, /metrics and the fallbacks, over a real socket on 127.0.0.1:0.
import type { Server } from "node:http";
import pino from "pino";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
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

describe("HTTP endpoints", () => {
  let server: Server;
  let metrics: Metrics;
  let base: string;
  let readiness = { ready: false, reasons: ["first poll of offchain:BTC/USD pending"] };

  beforeEach(async () => {
    metrics = createMetrics(new Registry());
    server = createHttpServer({ metrics, readiness: () => readiness, logger: pino({ level: "silent" }) });
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
    expect(post.headers.get("allow")).toBe("GET");
    await post.arrayBuffer();
  });

  it("rejects listen on a port already in use", async () => {
    const port = Number(new URL(base).port);
    const other = createHttpServer({
      metrics,
      readiness: () => readiness,
      logger: pino({ level: "silent" }),
    });
    await expect(listen(other, "127.0.0.1", port)).rejects.toMatchObject({
      code: "PM_ERR_LISTEN",
      message: expect.stringContaining("already in use by another process") as unknown,
      cause: { code: "EADDRINUSE" },
    });
  });
});
