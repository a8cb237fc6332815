// createEventLoopWatchdog on fake timers: healthy ticks ping, a stalled loop logs and withholds the ping, stop() ends it.
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createEventLoopWatchdog } from "../../src/watchdog.js";

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

/** Make the next tick fire `lateMs` after it was due, as a loop blocked that long would. */
function blockLoopFor(lateMs: number): void {
  vi.setSystemTime(Date.now() + lateMs);
}

describe("createEventLoopWatchdog", () => {
  beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => vi.useRealTimers());

  it("pings once per on-time tick", () => {
    const { logger, lines } = captureLogger();
    const onHealthy = vi.fn();
    createEventLoopWatchdog({ logger, nowMs: Date.now, onHealthy, intervalMs: 1_000, stallMs: 5_000 });
    vi.advanceTimersByTime(999);
    expect(onHealthy).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onHealthy).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(9_000);
    expect(onHealthy).toHaveBeenCalledTimes(10);
    expect(lines).toEqual([]);
  });

  it.each([
    ["just under the stall limit", 5_000, true],
    ["past the stall limit", 5_001, false],
  ])("a tick %s late: healthy = %s", (_name, lateMs, healthy) => {
    const { logger, lines } = captureLogger();
    const onHealthy = vi.fn();
    createEventLoopWatchdog({ logger, nowMs: Date.now, onHealthy, intervalMs: 1_000, stallMs: 5_000 });
    blockLoopFor(lateMs);
    vi.advanceTimersByTime(1_000);
    expect(onHealthy).toHaveBeenCalledTimes(healthy ? 1 : 0);
    expect(lines.filter((l) => l.msg === "event loop stalled")).toEqual(
      healthy ? [] : [expect.objectContaining({ level: 50, lagMs: lateMs })],
    );
  });

  it("recovers after a stall: the next on-time tick pings again", () => {
    const { logger } = captureLogger();
    const onHealthy = vi.fn();
    createEventLoopWatchdog({ logger, nowMs: Date.now, onHealthy });
    blockLoopFor(20_000);
    vi.advanceTimersByTime(1_000);
    expect(onHealthy).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1_000);
    expect(onHealthy).toHaveBeenCalledTimes(1);
  });

  it("stop() ends the ticks (no ping while draining on SIGTERM)", () => {
    const { logger } = captureLogger();
    const onHealthy = vi.fn();
    const watchdog = createEventLoopWatchdog({ logger, nowMs: Date.now, onHealthy });
    vi.advanceTimersByTime(2_000);
    watchdog.stop();
    vi.advanceTimersByTime(10_000);
    expect(onHealthy).toHaveBeenCalledTimes(2);
    expect(vi.getTimerCount()).toBe(0);
  });
});
