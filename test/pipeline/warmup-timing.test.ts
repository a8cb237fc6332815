// When a target's candle warm-up runs: not at all when a cluster handover seeded its history far enough back (the
// candles would all be dropped) unless it has no data of its own and they end long ago, and not later than a
// period (and its coalescing) and a poll timeout behind a target that has no data.
import { pino } from "pino";
import { Subject } from "rxjs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createMonitorState } from "../../src/domain/monitor.js";
import { ScaledPrice } from "../../src/domain/price.js";
import type { PricePoint } from "../../src/domain/price-history.js";
import { createMonitorRunner, type MonitorRunner } from "../../src/pipeline/monitor-runner.js";
import type { StreamSignal } from "../../src/upstream/multi-stream-client.js";
import { rule } from "../domain/helpers.js";
import { offchainMonitors, recordingDeps, streamOn } from "./helpers.js";

const WINDOW_MS = 600_000;
const price = new ScaledPrice(100n * 10n ** 18n, 18);
const warmup = { enabled: true, interval: "1min", lookbackMs: 3_600_000 } as const;
const rules = [rule("price_change", { market: "offchain", windowMs: WINDOW_MS }, { threshold: 0.05 })];

/** A point every 10 s from `spanMs` before now to now. */
function handedOver(spanMs: number): PricePoint[] {
  const nowMs = Date.now();
  return Array.from({ length: spanMs / 10_000 + 1 }, (_, i) => ({
    atMs: nowMs - spanMs + i * 10_000,
    price,
  }));
}

/** A stream that never connects nor delivers: its targets have no first data. */
const silentStream = streamOn(new Subject<StreamSignal>(), "poll");

describe("when a target's warm-up fetches candles", () => {
  let runner: MonitorRunner | undefined;
  beforeEach(() => vi.useFakeTimers({ now: Date.UTC(2026, 10, 27, 6) }));
  afterEach(() => {
    runner?.stop();
    vi.useRealTimers();
  });

  it("only for the targets whose seeded history does not cover their window", async () => {
    const candleCalls: string[] = [];
    runner = createMonitorRunner(recordingDeps(candleCalls), createMonitorState());
    const pairs = ["COVERED/USD", "SHORT/USD", "NONE/USD"].map((pair) => ({ pair, periodMs: 1_000 }));
    runner.update({ ...offchainMonitors(pairs), warmup }, rules);
    const idOf = (pair: string): string => runner!.targetIds().find((id) => id.includes(pair))!;
    runner.seedHistory(idOf("COVERED/USD"), handedOver(WINDOW_MS + 30_000));
    runner.seedHistory(idOf("SHORT/USD"), handedOver(WINDOW_MS / 2));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(candleCalls.sort()).toEqual(["NONE/USD", "SHORT/USD"]);
  });

  it("for a target without data of its own whose seeded points end long ago (candles fill the time since)", async () => {
    const candleCalls: string[] = [];
    runner = createMonitorRunner(
      { ...recordingDeps(candleCalls), stream: silentStream },
      createMonitorState(),
    );
    const monitors = offchainMonitors([{ pair: "STALE/USD", periodMs: 1_000 }]);
    const offchain = monitors.offchain.map((m) => ({ ...m, transport: "stream" as const }));
    runner.update({ ...monitors, offchain, warmup }, rules);
    const ended = handedOver(WINDOW_MS + 30_000).map((point) => ({ ...point, atMs: point.atMs - 60_000 }));
    runner.seedHistory(runner.targetIds()[0]!, ended);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(candleCalls).toEqual(["STALE/USD"]);
  });

  it("after waiting for a target without data at most a period (5 % more: coalescing) and a poll timeout (logged)", async () => {
    const candleCalls: string[] = [];
    const logged: string[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => void logged.push(line) });
    const deps = { ...recordingDeps(candleCalls), logger, stream: silentStream };
    runner = createMonitorRunner(deps, createMonitorState());
    const monitors = offchainMonitors([
      { pair: "POLLED/USD", periodMs: 1_000 },
      { pair: "STREAMED/USD", periodMs: 1_000 },
    ]);
    const offchain = monitors.offchain.map((m) =>
      m.pair === "STREAMED/USD" ? { ...m, transport: "stream" as const } : m,
    );
    runner.update({ ...monitors, offchain, warmup }, rules);
    // a period moved by timer coalescing (5 %) and a poll timeout
    await vi.advanceTimersByTimeAsync(1_050 + deps.pollTimeoutMs - 10);
    expect(candleCalls).toEqual([]);
    await vi.advanceTimersByTimeAsync(20);
    expect(candleCalls).toContain("POLLED/USD");
    expect(logged.join("")).toContain("warm-ups go ahead without the first data");
    expect(logged.join("")).toContain("STREAMED/USD");
  });
});
