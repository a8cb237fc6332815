// Warms a target's price history from candlesticks at start, so windowed rules work from the first minute.
import type { CandleSeries, Interval, TargetSpec } from "../domain/types.js";
import { INTERVAL_MS } from "../domain/types.js";
import type { ScaledPrice } from "../domain/price.js";
import type { PragmaClient } from "../upstream/types.js";

/** A past price point: the close of a candle, at the end of its bucket. */
export interface WarmupPoint {
  readonly atMs: number;
  readonly price: ScaledPrice;
}

/** Candle closes within `lookbackMs` before `nowMs`, oldest first. */
export function candlesToHistory(
  series: CandleSeries,
  interval: Interval,
  lookbackMs: number,
  nowMs: number,
): WarmupPoint[] {
  const bucketMs = INTERVAL_MS[interval];
  const points: WarmupPoint[] = [];
  for (const candle of series.candles) {
    const atMs = candle.timeMs + bucketMs;
    if (atMs <= nowMs && atMs >= nowMs - lookbackMs) points.push({ atMs, price: candle.close });
  }
  return points.sort((a, b) => a.atMs - b.atMs);
}

/**
 * The earliest bucket start whose close candlesToHistory keeps (a close is at its bucket's end): the bound the
 * candle decoder reads down to, so it decodes the look-back's candles only, not all 10 000 of a body.
 */
export function warmupSinceMs(interval: Interval, lookbackMs: number, nowMs: number): number {
  return nowMs - lookbackMs - INTERVAL_MS[interval];
}

/**
 * Whether candles can warm a target's history: the candlestick endpoint serves spot medians only, so a
 * perp, future or twap target warmed from them would compare its own prices with another market's.
 */
export function canWarmUp(spec: Extract<TargetSpec, { kind: "offchain" }>): boolean {
  return spec.entryType === "spot" && spec.aggregation === "median";
}

/** Fetch the candlesticks of a spot median target (see canWarmUp) and turn them into history points. */
export async function warmUpHistory(
  client: PragmaClient,
  spec: Extract<TargetSpec, { kind: "offchain" }>,
  interval: Interval,
  lookbackMs: number,
  nowMs: number,
): Promise<WarmupPoint[]> {
  const series = await client.getCandlesticks(
    {
      pair: spec.pair,
      entryType: "spot",
      aggregation: "median",
      interval,
      routing: true,
      withComponents: false,
    },
    { sinceMs: warmupSinceMs(interval, lookbackMs, nowMs) },
  );
  return candlesToHistory(series, interval, lookbackMs, nowMs);
}

/**
 * History fetches allowed in flight at once. A start, a reload or a cluster handover warms every new target at once;
 * unbounded, those candle requests fill the upstream pool and the targets' first polls queue behind them (measured:
 * 130 targets adopted by a cluster member were first polled 20 s after they were owned, instead of within a period).
 */
export const WARMUP_CONCURRENCY = 4;

/** Runs tasks with at most `limit` of them in flight; the rest wait their turn in arrival order. */
export interface TaskGate {
  run<T>(task: () => Promise<T>): Promise<T>;
}

/** A gate admitting `limit` tasks at a time. */
export function taskGate(limit: number): TaskGate {
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const release = (): void => {
    inFlight -= 1;
    waiting.shift()?.();
  };
  return {
    async run(task) {
      if (inFlight >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
      inFlight += 1;
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}
