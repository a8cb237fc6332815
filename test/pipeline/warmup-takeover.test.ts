// Targets a cluster member takes over are polled first and warmed up after: their candle requests (10 000 candles a
// body) never sit at the upstream ahead of their own first polls, nor of the other survivors' (same lease expiry).
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createMonitorState } from "../../src/domain/monitor.js";
import { ScaledPrice } from "../../src/domain/price.js";
import type { CandleSeries, TargetSpec } from "../../src/domain/types.js";
import { createMetrics } from "../../src/metrics.js";
import { createEventHub } from "../../src/pipeline/event-hub.js";
import { createMonitorRunner, type MonitorRunner } from "../../src/pipeline/monitor-runner.js";
import { createJournal } from "../../src/state/journal.js";
import type { PragmaClient } from "../../src/upstream/types.js";
import { rule } from "../domain/helpers.js";
import { offchainMonitors } from "./helpers.js";

const PERIOD_MS = 1_000;
const PRICE_COST_MS = 10;
const CANDLES_COST_MS = 300;

/** An upstream that serves one request at a time in arrival order (as the single-threaded simulator does). */
function serialUpstream(): {
  client: PragmaClient;
  firstPollAtMs: Map<string, number>;
  candlesAtMs: Map<string, number>;
} {
  let busyUntilMs = 0;
  const serve = <T>(costMs: number, answer: () => T): Promise<T> => {
    busyUntilMs = Math.max(Date.now(), busyUntilMs) + costMs;
    return new Promise((resolve) => setTimeout(() => resolve(answer()), busyUntilMs - Date.now()));
  };
  const firstPollAtMs = new Map<string, number>();
  const candlesAtMs = new Map<string, number>();
  const unused = (): never => {
    throw new Error("not used in this test");
  };
  const client: PragmaClient = {
    getPairPrice: (query) =>
      serve(PRICE_COST_MS, () => {
        if (!firstPollAtMs.has(query.pair)) firstPollAtMs.set(query.pair, Date.now());
        const price = new ScaledPrice(100n * 10n ** 18n, 18);
        return { pairId: query.pair, price, numSources: 5, timestampMs: Date.now(), components: [] };
      }),
    getCandlesticks: (query) => {
      candlesAtMs.set(query.pair, Date.now());
      return serve(CANDLES_COST_MS, (): CandleSeries => ({ pairId: query.pair, candles: [] }));
    },
    getFundingRates: unused,
    iterateFundingRates: unused,
    getOnchainEntry: unused,
    getOnchainPublishers: unused,
    getVault: unused,
  };
  return { client, firstPollAtMs, candlesAtMs };
}

describe("warm-up of taken-over targets", () => {
  let runner: MonitorRunner | undefined;
  beforeEach(() => vi.useFakeTimers({ now: Date.UTC(2026, 10, 27, 4) }));
  afterEach(() => {
    runner?.stop();
    vi.useRealTimers();
  });

  it("polls them first, and fetches their candles only a period after the takeover", async () => {
    const upstream = serialUpstream();
    runner = createMonitorRunner(
      {
        client: upstream.client,
        hub: createEventHub({ journal: createJournal(100), nowMs: Date.now, version: "test" }),
        metrics: createMetrics(new Registry(), { collectProcess: false }),
        logger: pino({ level: "silent" }),
        nowMs: Date.now,
        random: () => 0.5,
        pollTimeoutMs: 5_000,
      },
      createMonitorState(),
    );
    const pairs = Array.from({ length: 8 }, (_, i) => ({ pair: `P${i}/USD`, periodMs: PERIOD_MS }));
    const mine = new Set(pairs.slice(0, 4).map((p) => p.pair));
    runner.restrict((spec: TargetSpec) => "pair" in spec && mine.has(spec.pair), false);
    const warmup = { enabled: true, interval: "1min", lookbackMs: 3_600_000 } as const;
    const rules = [rule("price_change", { market: "offchain", windowMs: 600_000 }, { threshold: 0.05 })];
    runner.update({ ...offchainMonitors(pairs), warmup }, rules);
    // the first four are warmed up (their polls go on meanwhile)
    await vi.advanceTimersByTimeAsync(10_000);
    expect(upstream.candlesAtMs.size).toBe(4);

    // the other four are taken over (another member's lease ran out)
    const takenAtMs = Date.now();
    for (const p of pairs) mine.add(p.pair);
    runner.restrict((spec: TargetSpec) => "pair" in spec && mine.has(spec.pair), false);
    await vi.advanceTimersByTimeAsync(5_000);
    const taken = pairs.slice(4).map((p) => p.pair);
    const polledAfterMs = taken.map((pair) => upstream.firstPollAtMs.get(pair)! - takenAtMs);
    const candlesAfterMs = taken.map((pair) => upstream.candlesAtMs.get(pair)! - takenAtMs);
    expect(candlesAfterMs.every(Number.isFinite)).toBe(true);
    // within the quarter-period spread of a takeover and the upstream's queue of four polls, not behind 4 x 300 ms
    expect(Math.max(...polledAfterMs)).toBeLessThanOrEqual(PERIOD_MS / 4 + 4 * PRICE_COST_MS);
    expect(Math.min(...candlesAfterMs)).toBeGreaterThanOrEqual(PERIOD_MS);
  });
});
