// A target whose price history a cluster handover seeded far enough back fetches no candles: the warm-up would
// add only points older than the window its rules read (or than the warm-up's own look-back).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createMonitorState } from "../../src/domain/monitor.js";
import { ScaledPrice } from "../../src/domain/price.js";
import type { PricePoint } from "../../src/domain/price-history.js";
import type { CandleSeries } from "../../src/domain/types.js";
import { createEventHub } from "../../src/pipeline/event-hub.js";
import { createMonitorRunner, type MonitorRunner } from "../../src/pipeline/monitor-runner.js";
import { createJournal } from "../../src/state/journal.js";
import { rule } from "../domain/helpers.js";
import { offchainMonitors, pairPriceClient, runnerDeps } from "./helpers.js";

const WINDOW_MS = 600_000;
const price = new ScaledPrice(100n * 10n ** 18n, 18);

/** A point every 10 s from `spanMs` before now to now. */
function handedOver(spanMs: number): PricePoint[] {
  const nowMs = Date.now();
  return Array.from({ length: spanMs / 10_000 + 1 }, (_, i) => ({
    atMs: nowMs - spanMs + i * 10_000,
    price,
  }));
}

describe("warm-up of a target seeded by a handover", () => {
  let runner: MonitorRunner | undefined;
  beforeEach(() => vi.useFakeTimers({ now: Date.UTC(2026, 10, 27, 6) }));
  afterEach(() => {
    runner?.stop();
    vi.useRealTimers();
  });

  it("fetches candles only for the targets whose seeded history does not cover their window", async () => {
    const candleCalls: string[] = [];
    const client = pairPriceClient(
      (query) =>
        Promise.resolve({
          pairId: query.pair,
          price,
          numSources: 5,
          timestampMs: Date.now(),
          components: [],
        }),
      (query) => {
        candleCalls.push(query.pair);
        return Promise.resolve<CandleSeries>({ pairId: query.pair, candles: [] });
      },
    );
    const hub = createEventHub({ journal: createJournal(100), nowMs: Date.now, version: "test" });
    runner = createMonitorRunner(runnerDeps(client, hub), createMonitorState());
    const warmup = { enabled: true, interval: "1min", lookbackMs: 3_600_000 } as const;
    const rules = [rule("price_change", { market: "offchain", windowMs: WINDOW_MS }, { threshold: 0.05 })];
    const pairs = ["COVERED/USD", "SHORT/USD", "NONE/USD"].map((pair) => ({ pair, periodMs: 1_000 }));
    runner.update({ ...offchainMonitors(pairs), warmup }, rules);
    const idOf = (pair: string): string => runner!.targetIds().find((id) => id.includes(pair))!;
    const [covered, short] = [idOf("COVERED/USD"), idOf("SHORT/USD")];
    runner.seedHistory(covered, handedOver(WINDOW_MS + 30_000));
    runner.seedHistory(short, handedOver(WINDOW_MS / 2));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(candleCalls.sort()).toEqual(["NONE/USD", "SHORT/USD"]);
  });
});
