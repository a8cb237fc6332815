// A candle turned into the prices the daemon would have polled inside it: open, the two extremes, close (pure).
import type { Candle, PairPrice } from "../domain/types.js";

/** One price at a time within a candle. */
export interface CandlePoint {
  readonly atMs: number;
  readonly price: PairPrice;
}

/**
 * The four prices of a candle of `candleMs` for `pairId`, in time order: the open at the bucket's start, the
 * extremes at one and two thirds (the low first on a rising candle, the high first on a falling one: the
 * shortest path through the four), the close just before the next bucket. Each is stamped fresh (a source
 * time equal to its own time, as a live poll would be) with one source and no components.
 */
export function candlePoints(pairId: string, candle: Candle, candleMs: number): CandlePoint[] {
  const rising = candle.close.raw >= candle.open.raw;
  const [first, second] = rising ? [candle.low, candle.high] : [candle.high, candle.low];
  const thirdMs = Math.floor(candleMs / 3);
  const points: [number, Candle["open"]][] = [
    [candle.timeMs, candle.open],
    [candle.timeMs + thirdMs, first],
    [candle.timeMs + 2 * thirdMs, second],
    [candle.timeMs + candleMs - 1, candle.close],
  ];
  return points.map(([atMs, price]) => ({
    atMs,
    price: { pairId, price, numSources: 1, timestampMs: atMs, components: [] },
  }));
}
