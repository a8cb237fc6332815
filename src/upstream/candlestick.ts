// GET /node/v1/aggregation/candlestick/{base}/{quote}: query building and the candle-series decoder.
import type { Candle, CandleSeries } from "../domain/types.js";
import {
  asObject,
  decodeItems,
  decodeWith,
  parseJsonBody,
  readArray,
  readDecimalPrice,
  readIsoTimeMs,
  readNonEmptyString,
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

/** Decode one OHLC bucket. */
function decodeCandle(value: unknown): Candle {
  const o = asObject(value, "");
  return {
    timeMs: readIsoTimeMs(o, "time"),
    open: readDecimalPrice(o, "open", CANDLE_DECIMALS),
    high: readDecimalPrice(o, "high", CANDLE_DECIMALS),
    low: readDecimalPrice(o, "low", CANDLE_DECIMALS),
    close: readDecimalPrice(o, "close", CANDLE_DECIMALS),
  };
}

/** Decode a parsed candlestick body into a CandleSeries (order kept as the server sent it); bad candles are skipped and reported. */
export function decodeCandleSeries(json: unknown, onSkip?: SkippedItemObserver): CandleSeries {
  return decodeWith("candlestick", json, (value) => {
    const o = asObject(value, "body");
    return {
      pairId: readNonEmptyString(o, "pair_id"),
      candles: decodeItems("candlestick", readArray(o, "data"), "data", decodeCandle, onSkip),
    };
  });
}

/** Parse and decode a candlestick response body text. */
export function decodeCandleSeriesBody(text: string, onSkip?: SkippedItemObserver): CandleSeries {
  return decodeCandleSeries(parseJsonBody("candlestick", text), onSkip);
}
