// History warm-ups go through a gate: a start with many targets never holds every upstream connection with candle
// requests while the targets' first polls wait (a cluster member adopting 130 targets polled them 20 s late).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createMonitorState } from "../../src/domain/monitor.js";
import { ScaledPrice } from "../../src/domain/price.js";
import { createEventHub } from "../../src/pipeline/event-hub.js";
import { createMonitorRunner, type MonitorRunner } from "../../src/pipeline/monitor-runner.js";
import { taskGate, WARMUP_CONCURRENCY } from "../../src/pipeline/warmup.js";
import { createJournal } from "../../src/state/journal.js";
import type { CandleSeries } from "../../src/domain/types.js";
import { rule } from "../domain/helpers.js";
import { offchainMonitors, pairPriceClient, runnerDeps } from "./helpers.js";
import { waitFor } from "../wait-for.js";

describe("taskGate", () => {
  it("runs at most `limit` tasks at once, the rest in arrival order, and frees a slot when a task fails", async () => {
    const gate = taskGate(2);
    const started: number[] = [];
    const finish: (() => void)[] = [];
    const fail: (() => void)[] = [];
    const results = [0, 1, 2, 3].map((i) =>
      gate
        .run(
          () =>
            new Promise<number>((resolve, reject) => {
              started.push(i);
              finish[i] = () => resolve(i);
              fail[i] = () => reject(new Error(`task ${i}`));
            }),
        )
        .catch((error: unknown) => (error as Error).message),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    fail[1]!();
    await waitFor(() => expect(started).toEqual([0, 1, 2]));
    finish[0]!();
    await waitFor(() => expect(started).toEqual([0, 1, 2, 3]));
    finish[2]!();
    finish[3]!();
    expect(await Promise.all(results)).toEqual([0, "task 1", 2, 3]);
  });
});

describe("warm-up at start", () => {
  let runner: MonitorRunner | undefined;
  beforeEach(() => vi.useFakeTimers({ now: Date.UTC(2026, 10, 26, 12) }));
  afterEach(() => {
    runner?.stop();
    vi.useRealTimers();
  });

  it("fetches candles for at most WARMUP_CONCURRENCY targets at once while every target is polled", async () => {
    const pairs = Array.from({ length: 12 }, (_, i) => ({ pair: `P${i}/USD`, periodMs: 1_000 }));
    const candleCalls: string[] = [];
    const polled = new Set<string>();
    const answerCandles: (() => void)[] = [];
    const client = pairPriceClient(
      (query) => {
        polled.add(query.pair);
        const price = new ScaledPrice(100n * 10n ** 18n, 18);
        return Promise.resolve({
          pairId: query.pair,
          price,
          numSources: 5,
          timestampMs: Date.now(),
          components: [],
        });
      },
      (query) => {
        candleCalls.push(query.pair);
        const series: CandleSeries = { pairId: query.pair, candles: [] };
        return new Promise((resolve) => answerCandles.push(() => resolve(series)));
      },
    );
    const hub = createEventHub({ journal: createJournal(100), nowMs: Date.now, version: "test" });
    const deps = runnerDeps(client, hub);
    runner = createMonitorRunner(deps, createMonitorState());
    const warmup = { enabled: true, interval: "1min", lookbackMs: 3_600_000 } as const;
    const rules = [rule("price_change", { market: "offchain", windowMs: 600_000 }, { threshold: 0.05 })];
    runner.update({ ...offchainMonitors(pairs), warmup }, rules);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(candleCalls).toHaveLength(WARMUP_CONCURRENCY);
    expect(polled.size).toBe(pairs.length);
    // each answer lets the next target's warm-up in, until every target has been warmed once
    for (let answered = 0; answered < pairs.length; answered++) {
      answerCandles[answered]!();
      await vi.advanceTimersByTimeAsync(10);
    }
    expect(new Set(candleCalls).size).toBe(pairs.length);
  });
});
