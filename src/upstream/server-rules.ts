// What the live Pragma server refuses although the spec allows it (pragma-api-facts.md): one table for the client and the config.
import { INTERVALS, type Aggregation, type EntryType, type Interval } from "../domain/types.js";

/** Intervals the live server refuses per aggregation: 400 "Unsupported interval ...". */
export const UNSUPPORTED_INTERVALS: Readonly<Record<Aggregation, readonly Interval[]>> = {
  median: ["5min"],
  twap: ["100ms", "1s", "5s", "10s", "1w"],
};

/** Why the live server refuses `interval` with `aggregation`, or null when it serves the pair. */
export function unsupportedIntervalReason(aggregation: Aggregation, interval: Interval): string | null {
  return UNSUPPORTED_INTERVALS[aggregation].includes(interval)
    ? `upstream rejects interval ${interval} with aggregation ${aggregation} (400 Unsupported interval); ${aggregation} supports ${supportedIntervals(aggregation)}`
    : null;
}

/** The intervals an aggregation supports, for messages. */
function supportedIntervals(aggregation: Aggregation): string {
  return INTERVALS.filter((interval) => !UNSUPPORTED_INTERVALS[aggregation].includes(interval)).join(", ");
}

/** The only candle views the live server has (other intervals: 400 for 5min, 500 for the rest). */
export const CANDLE_INTERVALS = ["10s", "1min", "15min", "1h", "1d"] as const satisfies readonly Interval[];
export type CandleInterval = (typeof CANDLE_INTERVALS)[number];

/** Why the live server serves no candles of `interval`, or null when it does. */
export function candleIntervalReason(interval: Interval): string | null {
  if ((CANDLE_INTERVALS as readonly Interval[]).includes(interval)) return null;
  const status = interval === "5min" ? "400" : "500, no such candle view";
  return `upstream has no ${interval} candles (${status}); candle intervals are ${CANDLE_INTERVALS.join(", ")}`;
}

/** Why the live server serves no candles of `entryType`, or null (candles are spot only). */
export function candleEntryTypeReason(entryType: EntryType): string | null {
  return entryType === "spot" ? null : `upstream serves spot candles only, not ${entryType}`;
}

/** Why the live server fails /onchain with `aggregation`, or null: it has no on-chain twap view (500 every time). */
export function onchainAggregationReason(aggregation: Aggregation): string | null {
  return aggregation === "median"
    ? null
    : `upstream has no on-chain ${aggregation} (500 on every request); use median`;
}

/** The live server fails `aggregation=twap&with_components=true` with a 500 (a server bug). */
export function componentsSupported(aggregation: Aggregation): boolean {
  return aggregation !== "twap";
}

/** The one expiry form the live server parses: a UTC date-time without zone or fraction. */
const EXPIRY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

/**
 * Why the live server answers `Invalid expiry` to `expiry`, or null when it parses it. It reads only
 * `YYYY-MM-DDTHH:MM:SS` (UTC): a bare date or a zoned form is refused; the message gives the UTC form
 * of a zoned date-time, so the fix is a copy away (a bare date has no time to guess).
 */
export function expiryReason(expiry: string): string | null {
  if (EXPIRY.test(expiry) && Number.isFinite(Date.parse(`${expiry}Z`))) return null;
  const ms = /T/.test(expiry) ? Date.parse(expiry) : Number.NaN;
  const hint = Number.isFinite(ms) ? ` (in UTC: "${new Date(ms).toISOString().slice(0, 19)}")` : "";
  return `upstream accepts only YYYY-MM-DDTHH:MM:SS in UTC, without zone or fraction (else 400 Invalid expiry)${hint}`;
}

/** How an off-chain target's prices arrive: polled from /data, or pushed over the multi-pair SSE stream. */
export const TRANSPORTS = ["poll", "stream"] as const;
export type Transport = (typeof TRANSPORTS)[number];

/**
 * Why the live server's SSE stream cannot carry an off-chain entry, or null when it can: the stream sends
 * spot medians only (no entry type parameter), refuses twap, routing and timestamps with its error event,
 * and has no `5min` median (the same 400 as /data).
 */
export function streamRefusalReason(entryType: EntryType, aggregation: Aggregation): string | null {
  if (aggregation !== "median")
    return `the SSE stream serves median only (upstream sends its error event for ${aggregation})`;
  if (entryType !== "spot") return `the SSE stream serves spot entries only, not ${entryType}`;
  return null;
}
