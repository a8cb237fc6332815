// Input validation of client queries: every bad argument is refused with PM_ERR_INVALID_REQUEST before any request.
import { PmError } from "../domain/errors.js";
import type { EndpointName } from "./types.js";

/** A pair symbol split into its path segments, upper-cased. */
export interface PairSymbol {
  readonly base: string;
  readonly quote: string;
}

const PAIR = /^([A-Za-z]{1,32})\/([A-Za-z]{1,32})$/;
const SOURCE = /^[A-Za-z0-9_-]{1,64}$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})?)?$/;
/** A request timestamp above this is almost certainly milliseconds passed where seconds are expected. */
const MAX_TIMESTAMP_S = 1e11;

/** Throw the PM_ERR_INVALID_REQUEST error for `field`. */
export function invalid(endpoint: EndpointName, field: string, reason: string): never {
  throw new PmError("PM_ERR_INVALID_REQUEST", `${endpoint}: ${field}: ${reason}`, {
    details: { endpoint, field },
  });
}

/** Validate "BASE/QUOTE" (letters only; lower case accepted) and upper-case it. */
export function validatePair(endpoint: EndpointName, pair: unknown): PairSymbol {
  const match = typeof pair === "string" ? PAIR.exec(pair) : null;
  if (match === null)
    return invalid(endpoint, "pair", `expected LETTERS/LETTERS, got ${JSON.stringify(pair)}`);
  return { base: (match[1] ?? "").toUpperCase(), quote: (match[2] ?? "").toUpperCase() };
}

/** Validate an enum value against its allowed list; `fallback` stands in when the caller left it unset. */
export function validateEnum<T extends string>(
  endpoint: EndpointName,
  field: string,
  value: T | undefined,
  allowed: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (!allowed.includes(value)) {
    return invalid(endpoint, field, `expected one of ${allowed.join(", ")}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Validate a required enum value (no default). */
export function validateRequiredEnum<T extends string>(
  endpoint: EndpointName,
  field: string,
  value: T | undefined,
  allowed: readonly T[],
): T {
  if (value === undefined || !allowed.includes(value)) {
    return invalid(endpoint, field, `expected one of ${allowed.join(", ")}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Validate an optional boolean; `fallback` when unset. */
export function validateBoolean(
  endpoint: EndpointName,
  field: string,
  value: boolean | undefined,
  fallback: boolean,
): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") return invalid(endpoint, field, "expected a boolean");
  return value;
}

/** Validate a unix-seconds timestamp: a non-negative integer that does not look like milliseconds. */
export function validateTimestampS(endpoint: EndpointName, field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    return invalid(endpoint, field, `expected a non-negative integer of unix seconds, got ${String(value)}`);
  }
  if (value >= MAX_TIMESTAMP_S)
    return invalid(endpoint, field, `${value} looks like milliseconds, not seconds`);
  return value;
}

/** Validate an integer within [min, max]; `fallback` when unset. */
export function validateIntInRange(
  endpoint: EndpointName,
  field: string,
  value: number | undefined,
  min: number,
  max: number,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    return invalid(endpoint, field, `expected an integer in ${min}..${max}, got ${String(value)}`);
  }
  return value;
}

/** Validate an exchange/source name (letters, digits, `_`, `-`). */
export function validateSource(endpoint: EndpointName, value: unknown): string {
  if (typeof value !== "string" || !SOURCE.test(value)) {
    return invalid(endpoint, "source", `expected a source name, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Validate an ISO 8601 date (or date-time) such as a future's expiry. */
export function validateIsoDate(endpoint: EndpointName, field: string, value: unknown): string {
  if (typeof value !== "string" || !ISO_DATE.test(value) || !Number.isFinite(Date.parse(value))) {
    return invalid(endpoint, field, `expected an ISO 8601 date, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Validate a vault identifier: a non-empty string without control characters. */
export function validateVaultId(value: unknown): string {
  if (typeof value !== "string" || value.trim().length === 0 || hasControlChars(value)) {
    return invalid("vault", "vaultId", `expected a non-empty identifier, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** True when the string holds ASCII control characters. */
function hasControlChars(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** A query value sent verbatim (already made of URL-safe characters, e.g. the funding range "START,END"). */
export interface RawQueryValue {
  readonly raw: string;
}

/** One query parameter: name and value; strings are URI-encoded, raw values are not. */
export type QueryParam = readonly [string, string | number | boolean | RawQueryValue];

/** Build a query string ("?a=1&b=2") from parameters in order. */
export function buildQuery(params: readonly QueryParam[]): string {
  let out = "";
  for (const [name, value] of params) {
    const text =
      typeof value === "string"
        ? encodeURIComponent(value)
        : typeof value === "object"
          ? value.raw
          : String(value);
    out += `${out.length === 0 ? "?" : "&"}${name}=${text}`;
  }
  return out;
}
