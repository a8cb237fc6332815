// GET /node/v1/onchain/{base}/{quote}: query building (explicit booleans) and the on-chain entry-set decoder.
import {
  AGGREGATIONS,
  INTERVALS,
  NETWORKS,
  type Interval,
  type OnchainEntry,
  type OnchainEntrySet,
  type Variations,
} from "../domain/types.js";
import {
  FieldError,
  asObject,
  decodeItems,
  decodeWith,
  parseJsonBody,
  readCount,
  readDecimals,
  readHexPrice,
  readNonEmptyString,
  readOptionalArray,
  readSecondsAsMs,
  readString,
  type JsonObject,
  type SkippedItemObserver,
} from "./decode.js";
import type { OnchainQuery } from "./types.js";
import {
  buildQuery,
  invalid,
  validateBoolean,
  validateEnum,
  validatePair,
  validateRequiredEnum,
  validateTimestampS,
  type QueryParam,
} from "./validate.js";
import { onchainAggregationReason } from "./server-rules.js";
import { PATHS } from "./wire.js";

/**
 * Path and query of GET /node/v1/onchain. Defaults follow pragma-node (the spec is silent):
 * aggregation median, routing false, components true, variations true. twap is refused: the live server
 * has no on-chain twap view.
 */
export function onchainPath(query: OnchainQuery): string {
  const endpoint = "onchain";
  const { base, quote } = validatePair(endpoint, query.pair);
  const network = validateRequiredEnum(endpoint, "network", query.network, NETWORKS);
  const aggregation = validateEnum(endpoint, "aggregation", query.aggregation, AGGREGATIONS, "median");
  const routing = validateBoolean(endpoint, "routing", query.routing, false);
  const components = validateBoolean(endpoint, "components", query.components, true);
  const variations = validateBoolean(endpoint, "variations", query.variations, true);
  const params: QueryParam[] = [
    ["network", network],
    ["aggregation", aggregation],
    ["routing", routing],
  ];
  if (query.timestampS !== undefined) {
    const timestampS = validateTimestampS(endpoint, "timestampS", query.timestampS);
    if (aggregation !== "median")
      invalid(endpoint, "timestampS", "historical lookup requires median aggregation");
    params.push(["timestamp", timestampS]);
  }
  const unserved = onchainAggregationReason(aggregation);
  if (unserved !== null) invalid(endpoint, "aggregation", unserved);
  params.push(["components", components], ["variations", variations]);
  return PATHS.onchain(base, quote) + buildQuery(params);
}

/** Decode one publisher entry of an on-chain entry set. */
function decodeEntry(value: unknown, decimals: number): OnchainEntry {
  const o = asObject(value, "");
  return {
    publisher: readString(o, "publisher"),
    source: readString(o, "source"),
    price: readHexPrice(o, "price", decimals),
    txHash: readString(o, "tx_hash"),
    timestampMs: readSecondsAsMs(o, "timestamp"),
  };
}

const KNOWN_INTERVALS: ReadonlySet<string> = new Set(INTERVALS);
const NO_VARIATIONS: Variations = Object.freeze({});

/** Decode `variations`: null or absent → {}; only known interval keys with a non-null value kept; values are fractions. */
function readVariations(o: JsonObject): Variations {
  const value = o["variations"];
  if (value === undefined || value === null) return NO_VARIATIONS;
  const variations = asObject(value, "variations");
  const out: Partial<Record<Interval, number>> = {};
  let any = false;
  for (const key of Object.keys(variations)) {
    if (!KNOWN_INTERVALS.has(key)) continue;
    const fraction = variations[key];
    // The live server sends null for a window it cannot compute: that window is absent, not an error.
    if (fraction === null) continue;
    if (typeof fraction !== "number" || !Number.isFinite(fraction)) {
      throw new FieldError(`variations.${key}`, "finite number");
    }
    out[key as Interval] = fraction;
    any = true;
  }
  return any ? out : NO_VARIATIONS;
}

/**
 * Decode a parsed on-chain entry-set body; `decimals: 0` means the server failed to read them. A bad
 * component is skipped and reported to `onSkip`; the aggregate fields are judged strictly.
 */
export function decodeOnchainEntrySet(json: unknown, onSkip?: SkippedItemObserver): OnchainEntrySet {
  return decodeWith("onchain", json, (value) => {
    const o = asObject(value, "body");
    const decimals = readDecimals(o, "decimals");
    const rawComponents = readOptionalArray(o, "components");
    return {
      pairId: readNonEmptyString(o, "pair_id"),
      price: readHexPrice(o, "price", decimals),
      decimalsKnown: decimals > 0,
      lastUpdatedMs: readSecondsAsMs(o, "last_updated_timestamp"),
      numSources: readCount(o, "nb_sources_aggregated"),
      assetType: readString(o, "asset_type"),
      components: decodeItems(
        "onchain",
        rawComponents,
        "components",
        (item) => decodeEntry(item, decimals),
        onSkip,
      ),
      variations: readVariations(o),
    };
  });
}

/** Parse and decode an on-chain entry-set body text. */
export function decodeOnchainEntrySetBody(text: string, onSkip?: SkippedItemObserver): OnchainEntrySet {
  return decodeOnchainEntrySet(parseJsonBody("onchain", text), onSkip);
}
