// createLoopMonitor on fake timers: on-time samples ping systemd, a stall raises monitor_stalled once, holds verdicts, and resolves.
import { Writable } from "node:stream";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AlertPayload } from "../../src/domain/events.js";
import { createMetrics } from "../../src/metrics.js";
import { createLoopMonitor } from "../../src/pipeline/loop-monitor.js";

/** A pino logger writing JSON lines into an array (pino's injected destination, no mocks). */
function captureLogger() {
  const lines: { level: number; msg: string; lagMs?: number }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string; lagMs?: number });
      done();
    },
  });
  return { logger: pino({ level: "info" }, stream), lines };
}

/** Make the next sample fire `lateMs` after it was due, as a loop blocked that long would. */
function blockLoopFor(lateMs: number): void {
  vi.setSystemTime(Date.now() + lateMs);
}

const SETTINGS = { sampleIntervalMs: 1_000, thresholdMs: 5_000, holdMs: 10_000 };

function start() {
  const { logger, lines } = captureLogger();
  const onHealthy = vi.fn();
  const published: AlertPayload[] = [];
  const metrics = createMetrics(new Registry(), { collectProcess: false });
  const monitor = createLoopMonitor({
    logger,
    nowMs: Date.now,
    settings: SETTINGS,
    publish: (alert) => published.push(alert),
    metrics,
    onHealthy,
  });
  return { monitor, lines, onHealthy, published, metrics };
}

describe("createLoopMonitor", () => {
  beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => vi.useRealTimers());

  it("pings once per on-time sample and holds nothing", () => {
    const { monitor, lines, onHealthy, published } = start();
    vi.advanceTimersByTime(999);
    expect(onHealthy).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onHealthy).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(9_000);
    expect(onHealthy).toHaveBeenCalledTimes(10);
    expect(monitor.holding()).toBe(false);
    expect([lines, published]).toEqual([[], []]);
  });

  it.each([
    ["just under the threshold", 5_000, true],
    ["past the threshold", 5_001, false],
  ])("a sample %s late: healthy = %s", (_name, lateMs, healthy) => {
    const { lines, onHealthy, published } = start();
    blockLoopFor(lateMs);
    vi.advanceTimersByTime(1_000);
    expect(onHealthy).toHaveBeenCalledTimes(healthy ? 1 : 0);
    expect(lines.filter((l) => l.msg === "event loop stalled")).toEqual(
      healthy ? [] : [expect.objectContaining({ level: 50, lagMs: lateMs })],
    );
    expect(published.map((a) => [a.rule, a.status])).toEqual(healthy ? [] : [["monitor_stalled", "firing"]]);
  });

  it("raises monitor_stalled once, holds verdicts through the hold, pings meanwhile, then resolves", async () => {
    const { monitor, onHealthy, published, metrics } = start();
    blockLoopFor(20_000); // 19 s later than the sample due 1 s after start
    // the pipeline notices first (its timers run before the sampler's): it is told to hold
    expect(monitor.holding()).toBe(true);
    vi.advanceTimersByTime(1_000);
    expect(onHealthy).toHaveBeenCalledTimes(1);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({
      rule: "monitor_stalled",
      severity: "warning",
      status: "firing",
      value: 19_000,
    });
    expect(await metrics.registry.getSingleMetricAsString("pragma_monitor_stalled")).toContain(
      "pragma_monitor_stalled 1",
    );
    vi.advanceTimersByTime(8_000);
    expect(monitor.holding()).toBe(true);
    vi.advanceTimersByTime(2_000);
    expect(monitor.holding()).toBe(false);
    expect(published.map((a) => a.status)).toEqual(["firing", "resolved"]);
    expect(published[1]).toMatchObject({
      fingerprint: published[0]!.fingerprint,
      context: { maxLagMs: 19_000 },
    });
    expect(await metrics.registry.getSingleMetricAsString("pragma_monitor_stalled")).toContain(
      "pragma_monitor_stalled 0",
    );
  });

  it("stop() ends the samples (no ping while draining on SIGTERM)", () => {
    const { monitor, onHealthy } = start();
    vi.advanceTimersByTime(2_000);
    monitor.stop();
    vi.advanceTimersByTime(10_000);
    expect(onHealthy).toHaveBeenCalledTimes(2);
    expect(vi.getTimerCount()).toBe(0);
  });
});
