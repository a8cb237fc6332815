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
import { PATHS } from "./wire.js";

/** Candle OHLC strings are decimal integers scaled by 18 (pragma-api-facts.md). */
const CANDLE_DECIMALS = 18;

/** Path and query of GET /node/v1/aggregation/candlestick; same parameters and defaults as pair price. */
export function candlestickPath(query: CandlestickQuery): string {
  const { base, quote, search } = pairPriceQueryString("candlestick", query);
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
