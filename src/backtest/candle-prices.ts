// A candle turned into the prices the daemon would have polled inside it: open, the two extremes, close (pure).
import type { Candle, PairPrice } from "../domain/types.js";

/** One price at a time within a candle. */
export interface CandlePoint {
  readonly atMs: number;
  readonly price: PairPrice;
}

/** Prices per candle: open, first extreme, second extreme, close. */
export const POINTS_PER_CANDLE = 4;

/**
 * Price `index` (0 to 3) of a candle of `candleMs` for `pairId`, in time order: the open at the bucket's start,
 * the extremes at one and two thirds (the low first on a rising candle, the high first on a falling one: the
 * shortest path through the four), the close just before the next bucket. Each is stamped fresh (a source
 * time equal to its own time, as a live poll would be) with one source and no components.
 */
export function candlePoint(pairId: string, candle: Candle, candleMs: number, index: number): CandlePoint {
  const thirdMs = Math.floor(candleMs / 3);
  const rising = candle.close.raw >= candle.open.raw;
  let atMs = candle.timeMs;
  let price = candle.open;
  if (index === 1 || index === 2) {
    atMs += index * thirdMs;
    price = rising === (index === 1) ? candle.low : candle.high;
  } else if (index === 3) {
    atMs += candleMs - 1;
    price = candle.close;
  }
  return { atMs, price: { pairId, price, numSources: 1, timestampMs: atMs, components: [] } };
}
