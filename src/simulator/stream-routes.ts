// GET /node/v1/data/multi/stream: the live server's SSE price stream, validated like it and priced like /data.
import { AGGREGATIONS, INTERVAL_MS, INTERVALS, type Interval } from "../domain/types.js";
import type { WirePairPrice } from "../upstream/wire.js";
import type { Market, PairModel } from "./market.js";
import { unsupportedIntervalResponse, wirePairPrice } from "./offchain-routes.js";
import { boolParam, enumParam, intParam, parseParams, QueryRejection } from "./query.js";
import { entryError, queryRejection, type SimResponse } from "./responses.js";
import { routePrice, type OffchainSpec } from "./sources.js";

/** The live server's path of the multi-pair SSE stream. */
export const MULTI_STREAM_PATH = "/node/v1/data/multi/stream";

/** The one error event the live server sends for routing, a timestamp or twap, then the stream ends. */
export const STREAM_ENTRIES_ERROR = "SSE streaming for entries only works with no routing & for median.";

/** Bounds the simulator sets (the live server's are unknown): pairs per connection, historical prices per pair. */
const MAX_STREAM_PAIRS = 2_000;
const MAX_HISTORICAL_PRICES = 1_000;
/** The live server's defaults: `interval` 100ms, 50 historical prices. */
const DEFAULT_STREAM_INTERVAL: Interval = "100ms";
const DEFAULT_HISTORICAL_PRICES = 50;
const PAIR_RE = /^[A-Z]+\/[A-Z]+$/;

/** A validated stream request: the pairs it prices, every how many ms, and how much history comes first. */
export interface StreamPlan {
  readonly pairs: readonly PairModel[];
  readonly interval: Interval;
  readonly intervalMs: number;
  readonly historicalPrices: number;
  /** Set when the live server would answer with its one `error` event instead of prices. */
  readonly errorEvent: string | null;
}

/** Validate a stream request's query: a StreamPlan, or the HTTP error response sent instead of a stream. */
export function parseStreamRequest(market: Market, search: string): StreamPlan | SimResponse {
  try {
    return parseStreamParams(market, search);
  } catch (error) {
    if (error instanceof QueryRejection) return queryRejection(error.message);
    throw error;
  }
}

function parseStreamParams(market: Market, search: string): StreamPlan | SimResponse {
  const params = parseParams(search);
  const nowMs = market.clock.nowMs();
  const interval = enumParam(params, "interval", INTERVALS, DEFAULT_STREAM_INTERVAL);
  // the live server's default aggregation is twap, which the stream refuses (pragma-api-facts.md)
  const aggregation = enumParam(params, "aggregation", AGGREGATIONS, "twap");
  const routing = boolParam(params, "routing", false);
  const historicalPrices = intParam(params, "historical_prices") ?? DEFAULT_HISTORICAL_PRICES;
  if (historicalPrices < 0 || historicalPrices > MAX_HISTORICAL_PRICES)
    return entryError(400, `Invalid historical_prices: must be 0..${MAX_HISTORICAL_PRICES}`, nowMs);
  const unsupported = unsupportedIntervalResponse("median", interval, nowMs);
  if (unsupported !== null) return unsupported;
  const intervalMs = INTERVAL_MS[interval];
  const base = { pairs: [], interval, intervalMs, historicalPrices };
  if (routing || params.has("timestamp") || aggregation !== "median")
    return { ...base, errorEvent: STREAM_ENTRIES_ERROR };
  const names = [...new Set(new URLSearchParams(search).getAll("pairs[]").map((p) => p.toUpperCase()))];
  if (names.length === 0) return queryRejection("missing field `pairs[]`");
  if (names.length > MAX_STREAM_PAIRS)
    return entryError(400, `Too many pairs: at most ${MAX_STREAM_PAIRS} per stream`, nowMs);
  const pairs: PairModel[] = [];
  for (const name of names) {
    // no routing on the stream: only directly quoted pairs are found
    const pair = PAIR_RE.test(name) ? market.pairs.get(name) : undefined;
    if (pair === undefined) return entryError(404, `Entry not found: ${name}`, nowMs);
    pairs.push(pair);
  }
  return { ...base, pairs, errorEvent: null };
}

/** The median spot spec a stream prices with (the pair-price endpoint's, at the stream's interval). */
function streamSpec(plan: StreamPlan): OffchainSpec {
  return { entryType: "spot", expiryMs: null, aggregation: "median", intervalMs: plan.intervalMs };
}

/** One price event at `atMs`: each pair's price as /data answers it then (components null), skipping `left`. */
export function streamPrices(
  market: Market,
  plan: StreamPlan,
  atMs: number,
  left: ReadonlySet<string>,
): WirePairPrice[] {
  const spec = streamSpec(plan);
  const out: WirePairPrice[] = [];
  for (const pair of plan.pairs) {
    const pairId = pair.def.pairId;
    if (left.has(pairId)) continue;
    const price = routePrice(market, pairId, { kind: "direct", pair }, spec, atMs);
    if (price !== null) out.push(wirePairPrice(pairId, price, false));
  }
  return out;
}

/** The first (`historical`) event: per pair, its prices at the last `historicalPrices` intervals, oldest first. */
export function historicalEvent(market: Market, plan: StreamPlan, atMs: number): WirePairPrice[][] {
  const spec = streamSpec(plan);
  return plan.pairs.map((pair) => {
    const series: WirePairPrice[] = [];
    for (let k = plan.historicalPrices - 1; k >= 0; k--) {
      const tMs = atMs - k * plan.intervalMs;
      if (tMs < market.genesisMs) continue;
      const price = routePrice(market, pair.def.pairId, { kind: "direct", pair }, spec, tMs);
      if (price !== null) series.push(wirePairPrice(pair.def.pairId, price, false));
    }
    return series;
  });
}
