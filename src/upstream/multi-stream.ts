// GET /node/v1/data/multi/stream (the live server's SSE price stream): its query and the decoder of its events.
import { PmError } from "../domain/errors.js";
import type { Interval, PairPrice } from "../domain/types.js";
import { decodeItems, parseJsonBody, type SkippedItemObserver } from "./decode.js";
import { decodePairPriceFields } from "./pair-price.js";
import { buildQuery, validatePair, type QueryParam } from "./validate.js";

/** Path of the multi-pair stream below the /node/v1 base URL. */
export const MULTI_STREAM_PATH = "/node/v1/data/multi/stream";

/** One decoded event of the stream: the latest price of each pair, the history sent first, or the server's refusal. */
export type StreamEvent =
  | { readonly kind: "prices"; readonly prices: readonly PairPrice[] }
  | { readonly kind: "historical"; readonly prices: readonly PairPrice[] }
  | { readonly kind: "refused"; readonly error: PmError };

/**
 * Path and query of a stream of `pairs` (validated, upper-cased): every parameter explicit, median, and
 * neither routing nor a timestamp, which the stream refuses.
 */
export function multiStreamPath(
  pairs: readonly string[],
  interval: Interval,
  historicalPrices: number,
): string {
  const params: QueryParam[] = pairs.map((pair) => {
    const { base, quote } = validatePair("multi_stream", pair);
    return ["pairs[]", `${base}/${quote}`];
  });
  params.push(["interval", interval], ["aggregation", "median"], ["historical_prices", historicalPrices]);
  return MULTI_STREAM_PATH + buildQuery(params);
}

/**
 * Decode one SSE message: `historical` (per pair, an array of prices), `error` (`{"error": "..."}`), or an
 * unnamed event (an array of prices). A bad price is left out and reported to `onSkip`; a body that is
 * not the expected JSON at all throws a PM_ERR_UPSTREAM_DECODE error.
 */
export function decodeStreamEvent(
  message: { readonly event?: string | undefined; readonly data: string },
  onSkip?: SkippedItemObserver,
): StreamEvent {
  const json = parseJsonBody("multi_stream", message.data);
  if (message.event === "error" || (!Array.isArray(json) && typeof json === "object" && json !== null)) {
    const text = (json as { error?: unknown }).error;
    const reason = typeof text === "string" ? text : message.data.slice(0, 200);
    return {
      kind: "refused",
      error: new PmError("PM_ERR_UPSTREAM_STREAM", `multi_stream: ${reason}`, {
        details: { endpoint: "multi_stream" },
      }),
    };
  }
  if (!Array.isArray(json)) throw notAnArray();
  if (message.event === "historical") {
    const prices: PairPrice[] = [];
    json.forEach((series, i) => {
      if (!Array.isArray(series))
        return onSkip?.({ endpoint: "multi_stream", field: `[${i}]`, expected: "array" });
      prices.push(...decodeItems("multi_stream", series, `[${i}]`, decodePrice, onSkip));
    });
    return { kind: "historical", prices };
  }
  return { kind: "prices", prices: decodeItems("multi_stream", json, "", decodePrice, onSkip) };
}

/** One pair price of an event, checked by the pair-price decoder (a FieldError marks it skipped). */
function decodePrice(item: unknown): PairPrice {
  return decodePairPriceFields(item, undefined);
}

function notAnArray(): PmError {
  return new PmError("PM_ERR_UPSTREAM_DECODE", "multi_stream: data: expected an array of pair prices", {
    details: { endpoint: "multi_stream", field: "data" },
  });
}
