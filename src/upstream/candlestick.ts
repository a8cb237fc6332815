// GET /node/v1/aggregation/candlestick/{base}/{quote}: query building and the candle-series decoder.
import type { Candle, CandleSeries } from "../domain/types.js";
import {
  asObject,
  decodeWith,
  parseJsonBody,
  readArray,
  readDecimalPrice,
  readIsoTimeMs,
  readNonEmptyString,
  skipItem,
  type JsonObject,
  type SkippedItemObserver,
} from "./decode.js";
import { pairPriceQueryString } from "./pair-price.js";
import type { CandlestickQuery } from "./types.js";
import { candleEntryTypeReason, candleIntervalReason } from "./server-rules.js";
import { invalid } from "./validate.js";
import { PATHS } from "./wire.js";

/** Candle OHLC strings are decimal integers scaled by 18 (pragma-api-facts.md). */
const CANDLE_DECIMALS = 18;

/** Interval sent when the caller sets none: a candle view the live server has. */
const DEFAULT_CANDLE_INTERVAL = "1h";

/**
 * Path and query of GET /node/v1/aggregation/candlestick; same parameters as pair price. Candle views the
 * live server does not have (other intervals, perp and future entries) are refused here, with its reason.
 */
export function candlestickPath(query: CandlestickQuery): string {
  const interval = query.interval ?? DEFAULT_CANDLE_INTERVAL;
  const intervalReason = candleIntervalReason(interval);
  if (intervalReason !== null) invalid("candlestick", "interval", intervalReason);
  const entryTypeReason = candleEntryTypeReason(query.entryType ?? "spot");
  if (entryTypeReason !== null) invalid("candlestick", "entryType", entryTypeReason);
  const { base, quote, search } = pairPriceQueryString("candlestick", { ...query, interval });
  return PATHS.candlestick(base, quote) + search;
}

/** The OHLC prices of a bucket whose time is already read, checked in field order (the first bad one is reported). */
function decodeCandlePrices(o: JsonObject, timeMs: number): Candle {
  return {
    timeMs,
    open: readDecimalPrice(o, "open", CANDLE_DECIMALS),
    high: readDecimalPrice(o, "high", CANDLE_DECIMALS),
    low: readDecimalPrice(o, "low", CANDLE_DECIMALS),
    close: readDecimalPrice(o, "close", CANDLE_DECIMALS),
  };
}

/** The time of a list item, or null when it has none that reads (not an object, bad `time`). */
function candleTimeMsOrNull(value: unknown): number | null {
  try {
    return readIsoTimeMs(asObject(value, ""), "time");
  } catch {
    return null;
  }
}

/**
 * The candles of `items` whose bucket starts at or after `sinceMs` (-Infinity: every candle), in the order sent; a
 * malformed candle in range is skipped and reported. The live server sends newest first (10 000 candles, where a
 * warm-up keeps its look-back's worth, e.g. 61): the read stops at the first candle older than `sinceMs` when the
 * candles read so far descend and the list's last candle is not newer than that one. Otherwise (an unordered or
 * oldest-first list) every item is read and the older ones dropped. Each item's time is read first; a candle older
 * than `sinceMs` is dropped without its prices read (bad prices there are not reported), and items after the stop
 * are not read at all (neither is a bad one reported).
 */
function decodeCandles(
  items: readonly unknown[],
  sinceMs: number,
  onSkip: SkippedItemObserver | undefined,
): Candle[] {
  const lastMs = items.length === 0 ? null : candleTimeMsOrNull(items[items.length - 1]);
  const out: Candle[] = [];
  let newestFirst = true;
  let previousMs = Number.POSITIVE_INFINITY;
  for (let i = 0; i < items.length; i++) {
    try {
      const o = asObject(items[i], "");
      const timeMs = readIsoTimeMs(o, "time");
      if (timeMs > previousMs) newestFirst = false;
      previousMs = timeMs;
      if (timeMs >= sinceMs) out.push(decodeCandlePrices(o, timeMs));
      else if (newestFirst && lastMs !== null && lastMs <= timeMs) break;
    } catch (error) {
      skipItem("candlestick", "data", i, error, onSkip);
    }
  }
  return out;
}

/**
 * Decode a parsed candlestick body into a CandleSeries (order kept as the server sent it); bad candles are skipped
 * and reported. With `sinceMs` (a warm-up's look-back) only the candles whose bucket starts at or after it are kept,
 * and on the live server's newest-first order the read stops there (see decodeCandles).
 */
export function decodeCandleSeries(
  json: unknown,
  onSkip?: SkippedItemObserver,
  sinceMs = Number.NEGATIVE_INFINITY,
): CandleSeries {
  return decodeWith("candlestick", json, (value) => {
    const o = asObject(value, "body");
    return {
      pairId: readNonEmptyString(o, "pair_id"),
      candles: decodeCandles(readArray(o, "data"), sinceMs, onSkip),
    };
  });
}

/**
 * Parse and decode a candlestick response body text (decodeCandleSeries). With `sinceMs` the whole body is still
 * parsed (then most of the cost): a body truncated or garbled past the kept candles stays a decode error.
 */
export function decodeCandleSeriesBody(
  text: string,
  onSkip?: SkippedItemObserver,
  sinceMs?: number,
): CandleSeries {
  return decodeCandleSeries(parseJsonBody("candlestick", text), onSkip, sinceMs);
}
