// Candles of one pair over [fromMs, toMs] read page by page from the candlestick endpoint, which answers with at
// most 10 000 candles ending at the requested time, newest first (pragma-api-facts.md).
import type { Candle } from "../domain/types.js";

/** One page: the candles ending with the bucket holding `atMs`, newest first (empty when there are none). */
export type CandlePageReader = (atMs: number) => Promise<readonly Candle[]>;

/** Most pages read for one pair: a bound on a misbehaving server, far above any range a person asks for. */
const MAX_PAGES = 1_000;

/**
 * The candles starting in [fromMs, toMs], oldest first, each once: read from `toMs` backwards, every next page
 * ending just before the oldest candle of the previous one, until a page reaches `fromMs`, is empty, or
 * brings nothing older (the start of the pair's history).
 */
export async function readCandleRange(
  readPage: CandlePageReader,
  fromMs: number,
  toMs: number,
): Promise<Candle[]> {
  const byStart = new Map<number, Candle>();
  let atMs = toMs;
  for (let page = 0; page < MAX_PAGES; page++) {
    const candles = await readPage(atMs);
    let oldestMs = Number.POSITIVE_INFINITY;
    for (const candle of candles) {
      oldestMs = Math.min(oldestMs, candle.timeMs);
      if (candle.timeMs >= fromMs && candle.timeMs <= toMs) byStart.set(candle.timeMs, candle);
    }
    if (candles.length === 0 || oldestMs <= fromMs || oldestMs >= atMs) break;
    atMs = oldestMs - 1;
  }
  return [...byStart.values()].sort((a, b) => a.timeMs - b.timeMs);
}
