// Wire formatting helpers: floats to scaled integers (hex or decimal digits), ISO times and error timestamps.
import { pow10 } from "../domain/price.js";

/** A positive float price as an integer scaled by 10^decimals (8 significant fractional digits kept). */
export function toScaledInteger(price: number, decimals: number): bigint {
  if (decimals >= 8) return BigInt(Math.round(price * 1e8)) * pow10(decimals - 8);
  return BigInt(Math.round(price * 10 ** decimals));
}

/** 0x-prefixed hex of the scaled price, as the /data and /onchain endpoints send it. */
export function toHexPrice(price: number, decimals: number): string {
  return `0x${toScaledInteger(price, decimals).toString(16)}`;
}

/** Decimal-digit string of the 18-decimal scaled price, as candles carry OHLC. */
export function toDecimalPrice18(price: number): string {
  return toScaledInteger(price, 18).toString();
}

/** ISO 8601 date-time without zone designator (UTC), as candle `time`. */
export function isoWithoutZone(timeMs: number): string {
  return new Date(timeMs).toISOString().slice(0, 19);
}

/** RFC 3339 UTC timestamp with nanosecond precision, as error bodies' `happened_at`. */
export function rfc3339Nanos(timeMs: number): string {
  const iso = new Date(timeMs).toISOString(); // 2025-03-10T08:27:29.324Z
  return `${iso.slice(0, 23)}000000Z`;
}

/** Median of a non-empty list of numbers (mean of the two middle values for even lengths). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const upper = sorted[middle] ?? Number.NaN;
  if (sorted.length % 2 === 1) return upper;
  return ((sorted[middle - 1] ?? upper) + upper) / 2;
}
