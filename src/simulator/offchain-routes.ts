// Handlers of the off-chain endpoints: pair price, candlesticks and funding-rate history.
import {
  AGGREGATIONS,
  ENTRY_TYPES,
  FUNDING_FREQUENCIES,
  INTERVAL_MS,
  INTERVALS,
  type Aggregation,
  type Interval,
} from "../domain/types.js";
import type { WireCandleSeries, WireFundingRatePage, WirePairPrice } from "../upstream/wire.js";
import { candleSeries } from "./candles.js";
import { toDecimalPrice18, toHexPrice, isoWithoutZone } from "./format.js";
import { fundingPage, hasFunding } from "./funding.js";
import type { Market } from "./market.js";
import { boolParam, enumParam, intParam, rangeParam, requiredString, type Params } from "./query.js";
import { entryError, FUTURE_TIMESTAMP, jsonOk, type SimResponse } from "./responses.js";
import { resolveRoute, routePrice, type OffchainPrice, type OffchainSpec } from "./sources.js";

/** Intervals the live server refuses per aggregation (pragma-api-facts.md). */
const UNSUPPORTED: Readonly<Record<Aggregation, readonly Interval[]>> = {
  median: ["5min"],
  twap: ["100ms", "1s", "5s", "10s", "1w"],
};

/** The live server's names of intervals and aggregations in its error texts (Rust enum variants). */
const INTERVAL_VARIANT: Readonly<Record<Interval, string>> = {
  "100ms": "OneHundredMillisecond",
  "1s": "OneSecond",
  "5s": "FiveSeconds",
  "10s": "TenSeconds",
  "1min": "OneMinute",
  "5min": "FiveMinutes",
  "15min": "FifteenMinutes",
  "1h": "OneHour",
  "2h": "TwoHours",
  "1d": "OneDay",
  "1w": "OneWeek",
};
const AGGREGATION_VARIANT: Readonly<Record<Aggregation, string>> = { median: "Median", twap: "Twap" };

/** Parse the shared pair-price/candlestick parameters; returns an error response or the evaluation spec. */
function pairParams(
  market: Market,
  params: Params,
  nowMs: number,
):
  | { spec: OffchainSpec; atMs: number; interval: Interval; routing: boolean; withComponents: boolean }
  | SimResponse {
  const timestampS = intParam(params, "timestamp");
  const interval = enumParam(params, "interval", INTERVALS, "2h");
  const routing = boolParam(params, "routing", true);
  const aggregation = enumParam(params, "aggregation", AGGREGATIONS, "median");
  const entryType = enumParam(params, "entry_type", ENTRY_TYPES, "spot");
  const expiry = params.get("expiry");
  const withComponents = boolParam(params, "with_components", false);
  const realNowMs = market.clock.nowMs();
  let expiryMs: number | null = null;
  if (entryType === "future") {
    if (expiry === undefined)
      return entryError(400, "Invalid expiry: required for future entries", realNowMs);
    expiryMs = Date.parse(
      /[zZ]|[+-]\d\d:?\d\d$/.test(expiry) || !expiry.includes("T") ? expiry : `${expiry}Z`,
    );
    if (Number.isNaN(expiryMs)) return entryError(400, `Invalid expiry: ${expiry}`, realNowMs);
  }
  if (timestampS !== null && timestampS * 1000 > nowMs) return entryError(400, FUTURE_TIMESTAMP, realNowMs);
  return {
    spec: { entryType, expiryMs, aggregation, intervalMs: INTERVAL_MS[interval] },
    atMs: timestampS === null ? nowMs : timestampS * 1000,
    interval,
    routing,
    withComponents,
  };
}

/** GET /node/v1/data/{base}/{quote}. */
export function handlePairPrice(market: Market, base: string, quote: string, params: Params): SimResponse {
  const nowMs = market.nowMs();
  const parsed = pairParams(market, params, nowMs);
  if ("status" in parsed) return parsed;
  const { spec, atMs } = parsed;
  const realNowMs = market.clock.nowMs();
  const pairId = `${base}/${quote}`;
  const unsupported = unsupportedIntervalResponse(spec.aggregation, parsed.interval, realNowMs);
  if (unsupported !== null) return unsupported;
  if (params.has("timestamp") && spec.aggregation !== "median") {
    return entryError(400, "Invalid timestamp: historical lookups require median aggregation", realNowMs);
  }
  const route = resolveRoute(market, base, quote, parsed.routing);
  if (route.kind === "missing") return entryError(404, route.message, realNowMs);
  const derivativesOk = route.kind === "direct" && route.pair.def.hasDerivatives;
  const expired = spec.expiryMs !== null && spec.expiryMs <= atMs;
  if (atMs < market.genesisMs || (spec.entryType !== "spot" && !derivativesOk) || expired) {
    return entryError(404, `Entry not found: ${pairId}`, realNowMs);
  }
  const price = routePrice(market, pairId, route, spec, atMs);
  if (price === null) return entryError(404, `Entry not found: ${pairId}`, realNowMs);
  return jsonOk(wirePairPrice(pairId, price, parsed.withComponents));
}

/** The 400 the live server answers for an interval it refuses with this aggregation, or null. */
export function unsupportedIntervalResponse(
  aggregation: Aggregation,
  interval: Interval,
  nowMs: number,
): SimResponse | null {
  if (!UNSUPPORTED[aggregation].includes(interval)) return null;
  return entryError(
    400,
    `Unsupported interval ${INTERVAL_VARIANT[interval]} for aggregation ${AGGREGATION_VARIANT[aggregation]}`,
    nowMs,
  );
}

/** A priced pair in the live server's pair-price format (also each item of a stream event, so both agree). */
export function wirePairPrice(pairId: string, price: OffchainPrice, withComponents: boolean): WirePairPrice {
  return {
    num_sources_aggregated: price.numSources,
    pair_id: pairId,
    price: toHexPrice(price.price, 18),
    timestamp: price.timestampMs,
    decimals: 18,
    components: withComponents
      ? price.components.map((c) => ({
          source: c.source,
          price: toHexPrice(c.price, 18),
          timestamp: c.timestampMs,
        }))
      : null,
  };
}

/**
 * GET /node/v1/aggregation/candlestick/{base}/{quote}: only timestamp and interval change the result.
 * As on the live server, candles are read for the pair itself (no routing, spot only) and a pair with
 * none (unknown, or a range before the history) is 200 with `data: []`, not a 404.
 */
export function handleCandlestick(market: Market, base: string, quote: string, params: Params): SimResponse {
  const nowMs = market.nowMs();
  const parsed = pairParams(market, params, nowMs);
  if ("status" in parsed) return parsed;
  const pairId = `${base}/${quote}`;
  const route = resolveRoute(market, base, quote, false);
  const candles =
    route.kind === "missing" || parsed.atMs < market.genesisMs
      ? []
      : candleSeries(market, route, parsed.spec.intervalMs, parsed.atMs);
  const body: WireCandleSeries = {
    pair_id: pairId,
    data: candles.map((candle) => ({
      time: isoWithoutZone(candle.startMs),
      open: toDecimalPrice18(candle.open),
      low: toDecimalPrice18(candle.low),
      high: toDecimalPrice18(candle.high),
      close: toDecimalPrice18(candle.close),
    })),
  };
  return jsonOk(body);
}

/** GET /node/v1/funding_rates/history/{base}/{quote}. */
export function handleFundingHistory(
  market: Market,
  base: string,
  quote: string,
  params: Params,
): SimResponse {
  const nowMs = market.nowMs();
  const realNowMs = market.clock.nowMs();
  // the live server upper-cases the source (`hyperliquid` works)
  const source = requiredString(params, "source").toUpperCase();
  const range = rangeParam(params, "timestamp");
  const frequency = enumParam(params, "frequency", FUNDING_FREQUENCIES, "All");
  const page = intParam(params, "page") ?? 1;
  const pageSize = intParam(params, "page_size") ?? 1000;
  // The spec states the limits (page from 1, page_size 1..1000); the live server clamps instead. We
  // reject: a client that sends an out-of-range value has a bug that clamping would hide.
  if (page < 1) return entryError(400, "Invalid pagination: page must be at least 1", realNowMs);
  if (pageSize < 1 || pageSize > 1000) {
    return entryError(400, "Invalid pagination: page_size must be between 1 and 1000", realNowMs);
  }
  const rangeError = range === null ? null : fundingRangeError(range, nowMs);
  if (rangeError !== null)
    return entryError(400, `Invalid timestamp: Timestamp range error: ${rangeError}`, realNowMs);
  const pairId = `${base}/${quote}`;
  if (!hasFunding(market, pairId, source)) {
    // an unknown pair or source is an empty page on the live server, not a 404
    const empty: WireFundingRatePage = { data: [], page, page_size: pageSize, has_next_page: false };
    return jsonOk(empty);
  }
  const window =
    range === null
      ? { fromMs: market.genesisMs, toMs: nowMs }
      : { fromMs: range.startS * 1000, toMs: range.endS * 1000 };
  const result = fundingPage(market, pairId, source, window, frequency, page, pageSize);
  const body: WireFundingRatePage = {
    data: result.data,
    page,
    page_size: pageSize,
    has_next_page: result.hasNextPage,
  };
  return jsonOk(body);
}

/** The live server's range checks, in its order: start after end, end in the future, start equal to end. */
function fundingRangeError(
  range: { readonly startS: number; readonly endS: number },
  nowMs: number,
): string | null {
  if (range.startS > range.endS) return "Start timestamp is after end timestamp";
  if (range.endS * 1000 > nowMs) return "End timestamp is in the future";
  if (range.startS === range.endS) return "Start timestamp equals end timestamp";
  return null;
}
