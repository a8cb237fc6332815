// Candlesticks and on-chain variations computed from the (fault-adjusted) mid price of a pair or route.
import { midPrice, type Market } from "./market.js";
import type { Route } from "./sources.js";

/** One OHLC bucket in float prices. */
export interface FloatCandle {
  readonly startMs: number;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
}

/** Most candles one response carries (the live server's limit). */
export const MAX_CANDLES = 10_000;
const SAMPLES_PER_CANDLE = 4;

/** Mid price of a resolvable route at `tMs` (cross through USD for routed pairs). */
export function routeMid(market: Market, route: Exclude<Route, { kind: "missing" }>, tMs: number): number {
  if (route.kind === "direct") return midPrice(market, route.pair, tMs);
  const base = route.base === null ? 1 : midPrice(market, route.base, tMs);
  const quote = route.quote === null ? 1 : midPrice(market, route.quote, tMs);
  return base / quote;
}

/**
 * OHLC of the bucket starting at `startMs`, cut at `endMs` for the current (partial) bucket; `knownClose`
 * is the mid at the close when the caller already has it (the next bucket's open).
 */
export function candleOf(
  market: Market,
  route: Exclude<Route, { kind: "missing" }>,
  startMs: number,
  intervalMs: number,
  endMs: number,
  knownClose?: number,
): FloatCandle {
  const closeMs = Math.min(startMs + intervalMs, endMs);
  const open = routeMid(market, route, startMs);
  const close = knownClose ?? routeMid(market, route, closeMs);
  let high = Math.max(open, close);
  let low = Math.min(open, close);
  for (let k = 1; k < SAMPLES_PER_CANDLE; k++) {
    const sample = routeMid(
      market,
      route,
      startMs + Math.floor(((closeMs - startMs) * k) / SAMPLES_PER_CANDLE),
    );
    if (sample > high) high = sample;
    if (sample < low) low = sample;
  }
  return { startMs, open, high, low, close };
}

/** Candles of `intervalMs` ending with the bucket containing `atMs`, newest first, none before genesis. */
export function candleSeries(
  market: Market,
  route: Exclude<Route, { kind: "missing" }>,
  intervalMs: number,
  atMs: number,
): FloatCandle[] {
  const candles: FloatCandle[] = [];
  let startMs = Math.floor(atMs / intervalMs) * intervalMs;
  // each bucket closes where the newer one opened: reuse that mid (up to 10 000 buckets per response)
  let newerOpen: number | undefined;
  while (candles.length < MAX_CANDLES && startMs + intervalMs > market.genesisMs) {
    const candle = candleOf(market, route, Math.max(startMs, market.genesisMs), intervalMs, atMs, newerOpen);
    candles.push(candle);
    newerOpen = candle.open;
    startMs -= intervalMs;
  }
  return candles;
}

/** Intervals the on-chain endpoint reports variations for. */
export const VARIATION_INTERVALS = [
  ["1h", 3_600_000],
  ["1d", 86_400_000],
  ["1w", 604_800_000],
] as const;

/** Variations as fractions between the mids of the current and previous candle; a key only when both exist. */
export function variations(
  market: Market,
  route: Exclude<Route, { kind: "missing" }>,
  atMs: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, intervalMs] of VARIATION_INTERVALS) {
    const currentStartMs = Math.floor(atMs / intervalMs) * intervalMs;
    const previousStartMs = currentStartMs - intervalMs;
    if (previousStartMs < market.genesisMs) continue;
    const current = candleOf(market, route, currentStartMs, intervalMs, atMs);
    const previous = candleOf(market, route, previousStartMs, intervalMs, atMs);
    const currentMid = (current.open + current.close) / 2;
    const previousMid = (previous.open + previous.close) / 2;
    out[key] = Number(((currentMid - previousMid) / previousMid).toPrecision(7));
  }
  return out;
}
