// The real daemon's exposure: no secret in its startup log, HEAD probes, and the Host and Origin rules on its port.
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../src/simulator/server.js";
import { upgradeStatus } from "../sinks/ws/harness.js";
import { rawStatus as status, startTestApp, type TestApp } from "./harness.js";
import { parsePrometheusText, sampleValue } from "./prometheus.js";

let current: TestApp | undefined;
let simulator: RunningSimulator | undefined;
afterEach(async () => {
  await current?.stop();
  await simulator?.close();
  current = undefined;
  simulator = undefined;
});

describe("exposure of the real daemon", () => {
  it("never logs the password of upstream.url", async () => {
    simulator = await startSimulator({ port: 0 });
    const url = `http://monitor:pw-s3cret-9@127.0.0.1:${simulator.port}`;
    current = await startTestApp({
      upstream: { url },
      monitors: { offchain: [{ pair: "BTC/USD", periodMs: 200 }] },
    });
    const started = await current.logs.waitFor(
      (line) => line.msg === "pragma-monitor started",
      5_000,
      "start",
    );
    expect(started["upstream"]).toBe(`http://monitor:[redacted]@127.0.0.1:${simulator.port}/`);
    await current.waitForEvent((event) => event.type === "price", 5_000, "a first price");
    expect(JSON.stringify(current.logs.lines)).not.toContain("pw-s3cret-9");
  });

  it("answers HEAD probes, refuses rebinding Hosts on every path and foreign Origins at /ws, counted", async () => {
    current = await startTestApp({});
    const { port } = current;
    expect(await status(port, "HEAD", "/healthz")).toBe(200);
    expect([200, 503]).toContain(await status(port, "HEAD", "/readyz"));
    const rebind = { Host: "rebind.evil.example:8787" };
    for (const path of ["/healthz", "/readyz", "/metrics"])
      expect(await status(port, "GET", path, rebind)).toBe(403);
    expect(await upgradeStatus(current.wsUrl, { headers: rebind })).toBe(403);
    expect(await upgradeStatus(current.wsUrl, { origin: "http://evil.example" })).toBe(403);
    expect(await upgradeStatus(current.wsUrl, { origin: `http://127.0.0.1:${port}` })).toBe(101);
    expect(await upgradeStatus(current.wsUrl, {})).toBe(101);
    const samples = parsePrometheusText(await (await fetch(`${current.httpUrl}/metrics`)).text());
    expect(sampleValue(samples, "pragma_monitor_ws_rejected_total", { reason: "origin" })).toBe(1);
    expect(sampleValue(samples, "pragma_monitor_ws_rejected_total", { reason: "host" })).toBe(1);
    expect(sampleValue(samples, "pragma_monitor_http_rejected_total", { reason: "host" })).toBe(3);
  });
});
