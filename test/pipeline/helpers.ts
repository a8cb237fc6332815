// Shared pipeline test helpers: a monitors config of spot/median off-chain pairs with every timing knob off.
import { pino } from "pino";
import { Registry } from "prom-client";
import type { Observable } from "rxjs";
import type { MonitorsConfig } from "../../src/config/types.js";
import { ScaledPrice } from "../../src/domain/price.js";
import type { CandleSeries } from "../../src/domain/types.js";
import { createMetrics } from "../../src/metrics.js";
import { createEventHub, type EventHub } from "../../src/pipeline/event-hub.js";
import { createJournal } from "../../src/state/journal.js";
import type { MonitorRunnerDeps } from "../../src/pipeline/monitor-runner.js";
import type { StreamSignal } from "../../src/upstream/multi-stream-client.js";
import type { PragmaClient } from "../../src/upstream/types.js";

/** Off-chain spot median pairs at 1 s interval; no jitter, spread, coalescing or warm-up. */
export function offchainMonitors(
  offchain: ReadonlyArray<{ pair: string; periodMs: number }>,
): MonitorsConfig {
  return {
    offchain: offchain.map((m) => ({
      ...m,
      entryType: "spot",
      aggregation: "median",
      interval: "1s",
      expiry: null,
      transport: null,
    })),
    onchain: [],
    publishers: [],
    funding: [],
    vaults: [],
    jitter: 0,
    spreadMs: 0,
    coalesceMs: 0,
    maxBackoffMs: 8_000,
    warmup: { enabled: false, interval: "1min", lookbackMs: 0 },
  };
}

/** Virtual time for code that takes `nowMs`/`setTimer`/`clearTimer`: timers run, in order, only inside `advance`. */
export interface VirtualClock {
  nowMs(): number;
  setTimer(callback: () => void, delayMs: number): unknown;
  clearTimer(handle: unknown): void;
  /** Move time forward by `ms`, running each timer due on the way at its own time. */
  advance(ms: number): void;
  /** Delays of the timers waiting now, soonest first. */
  pendingDelaysMs(): number[];
}

export function createVirtualClock(startMs: number): VirtualClock {
  let now = startMs;
  let nextId = 0;
  const timers = new Map<number, { readonly atMs: number; readonly callback: () => void }>();
  return {
    nowMs: () => now,
    setTimer(callback, delayMs) {
      timers.set(++nextId, { atMs: now + Math.max(0, delayMs), callback });
      return nextId;
    },
    clearTimer(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      const target = now + ms;
      for (;;) {
        const due = [...timers.entries()]
          .filter(([, timer]) => timer.atMs <= target)
          .sort(([a, x], [b, y]) => x.atMs - y.atMs || a - b)[0];
        if (due === undefined) break;
        timers.delete(due[0]);
        now = due[1].atMs;
        due[1].callback();
      }
      now = target;
    },
    pendingDelaysMs: () => [...timers.values()].map((timer) => timer.atMs - now).sort((a, b) => a - b),
  };
}

/** A client answering pair prices with `getPairPrice` (and candles with `getCandlesticks`); any other call throws. */
export function pairPriceClient(
  getPairPrice: PragmaClient["getPairPrice"],
  getCandlesticks?: PragmaClient["getCandlesticks"],
): PragmaClient {
  const notUsed = (): never => {
    throw new Error("not used in this test");
  };
  return {
    getPairPrice,
    getCandlesticks: getCandlesticks ?? notUsed,
    getFundingRates: notUsed,
    iterateFundingRates: notUsed,
    getOnchainEntry: notUsed,
    getOnchainPublishers: notUsed,
    getVault: notUsed,
  };
}

/**
 * Stream settings of the runner tests: `signals` is the connection (it opens whatever the runner asks); stale after 3
 * intervals (3 s at 1s) without a sign of life, healthy again after 2 prices events, components every 60 s.
 */
export function streamOn(
  signals: Observable<StreamSignal>,
  defaultTransport: "stream" | "poll" = "stream",
): NonNullable<MonitorRunnerDeps["stream"]> {
  return {
    open: () => signals,
    staleIntervals: 3,
    recoverEvents: 2,
    maxPairsPerConnection: 500,
    componentsPeriodMs: 60_000,
    defaultTransport,
  };
}

/** A runner's dependencies in tests: fresh metrics, silent logs, the (fake) Date clock, a 500 ms poll deadline. */
export function runnerDeps(
  client: PragmaClient,
  hub: EventHub,
  random: () => number = () => 0.5,
): MonitorRunnerDeps {
  return {
    client,
    hub,
    metrics: createMetrics(new Registry(), { collectProcess: false }),
    logger: pino({ level: "silent" }),
    nowMs: Date.now,
    random,
    pollTimeoutMs: 500,
  };
}

/** Runner deps whose client answers every pair's price (100) at once and records each candle request's pair (no candles). */
export function recordingDeps(candleCalls: string[]): MonitorRunnerDeps {
  const price = new ScaledPrice(100n * 10n ** 18n, 18);
  const client = pairPriceClient(
    (query) =>
      Promise.resolve({ pairId: query.pair, price, numSources: 5, timestampMs: Date.now(), components: [] }),
    (query) => {
      candleCalls.push(query.pair);
      return Promise.resolve<CandleSeries>({ pairId: query.pair, candles: [] });
    },
  );
  const hub = createEventHub({ journal: createJournal(100), nowMs: Date.now, version: "test" });
  return runnerDeps(client, hub);
}
