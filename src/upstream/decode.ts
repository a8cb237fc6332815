// Runtime validation helpers for upstream JSON: allocation-free on success, precise field paths on failure.
import { PmError } from "../domain/errors.js";
import { ScaledPrice } from "../domain/price.js";
import type { EndpointName } from "./types.js";

/** A field that failed validation; `path` grows as the error unwinds through nested decoders. */
export class FieldError extends Error {
  path: string;
  readonly expected: string;

  constructor(path: string, expected: string) {
    super(`${path}: expected ${expected}`);
    this.path = path;
    this.expected = expected;
  }
}

/** A JSON object as read from the wire, fields still unknown. */
export type JsonObject = Readonly<Record<string, unknown>>;

/** Largest `decimals` accepted: 10^77 already exceeds a 256-bit integer. */
const MAX_DECIMALS = 77;
/** Longest decimal price accepted (a 256-bit integer has at most 78 digits). */
const MAX_DECIMAL_DIGITS = 78;
/** Below this a timestamp is read as unix seconds, above as milliseconds (1e11 s is the year 5138). */
const SECONDS_MS_BOUNDARY = 1e11;
const DECIMAL_DIGITS = /^\d+$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(Z|[+-]\d{2}:\d{2})?$/;

/** Run a decoder, turning a FieldError into a PmError naming the endpoint and the field path. */
export function decodeWith<T>(endpoint: EndpointName, json: unknown, decode: (json: unknown) => T): T {
  try {
    return decode(json);
  } catch (error) {
    throw asDecodeError(endpoint, error);
  }
}

/** A FieldError as the PmError naming the endpoint and the field path; anything else unchanged. */
export function asDecodeError(endpoint: EndpointName, error: unknown): unknown {
  if (!(error instanceof FieldError)) return error;
  return new PmError("PM_ERR_UPSTREAM_DECODE", `${endpoint}: ${error.path}: expected ${error.expected}`, {
    details: { endpoint, field: error.path },
    cause: error,
  });
}

/** Parse a response body as JSON; an empty body, an HTML page or a syntax error is a decode error. */
export function parseJsonBody(endpoint: EndpointName, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const trimmed = text.trimStart();
    const what =
      trimmed.length === 0 ? "empty body" : trimmed.startsWith("<") ? "HTML instead of JSON" : "invalid JSON";
    throw new PmError("PM_ERR_UPSTREAM_DECODE", `${endpoint}: body: ${what}`, {
      details: { endpoint, field: "body" },
      cause: error,
    });
  }
}

/** Prefix the path of a FieldError thrown by a nested decoder (e.g. "price" → "components[2].price"). */
export function withPrefix(error: unknown, prefix: string): unknown {
  if (error instanceof FieldError) {
    const { path } = error;
    error.path = path === "" ? prefix : path.startsWith("[") ? prefix + path : `${prefix}.${path}`;
  }
  return error;
}

/** The value as a JSON object (not null, not an array), or a FieldError at `path`. */
export function asObject(value: unknown, path: string): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new FieldError(path, "object");
  }
  return value as JsonObject;
}

/** A list item the decoder left out because it failed validation: where, and what was expected. */
export interface SkippedItem {
  readonly endpoint: EndpointName;
  /** Path of the item's bad field, e.g. `[2].components[0].price`. */
  readonly field: string;
  readonly expected: string;
}

/** Told of every skipped list item (for a metric and a log line); must not throw. */
export type SkippedItemObserver = (item: SkippedItem) => void;

/**
 * Decode a list item by item: an item that fails validation is left out and reported to `onSkip`
 * (as `key[i].field`), so one bad item never costs the whole list. Errors other than a FieldError
 * (a bug, an upstream error envelope) still propagate.
 */
export function decodeItems<T>(
  endpoint: EndpointName,
  items: readonly unknown[],
  key: string,
  decode: (item: unknown) => T,
  onSkip: SkippedItemObserver | undefined,
): T[] {
  const out: T[] = [];
  for (let i = 0; i < items.length; i++) {
    try {
      out.push(decode(items[i]));
    } catch (error) {
      skipItem(endpoint, key, i, error, onSkip);
    }
  }
  return out;
}

/** Report the list item `key[index]` that `error` (a FieldError) left out; any other error is rethrown. */
export function skipItem(
  endpoint: EndpointName,
  key: string,
  index: number,
  error: unknown,
  onSkip: SkippedItemObserver | undefined,
): void {
  if (!(error instanceof FieldError)) throw error;
  withPrefix(error, `${key}[${index}]`);
  onSkip?.({ endpoint, field: error.path, expected: error.expected });
}

/** A required array field. */
export function readArray(o: JsonObject, key: string): readonly unknown[] {
  const value = o[key];
  if (!Array.isArray(value)) throw new FieldError(key, "array");
  return value;
}

/** An optional array field: absent or null reads as an empty array. */
export function readOptionalArray(o: JsonObject, key: string): readonly unknown[] {
  const value = o[key];
  if (value === undefined || value === null) return EMPTY;
  if (!Array.isArray(value)) throw new FieldError(key, "array or null");
  return value;
}
const EMPTY: readonly unknown[] = Object.freeze([]);

/** A required string field. */
export function readString(o: JsonObject, key: string): string {
  const value = o[key];
  if (typeof value !== "string") throw new FieldError(key, "string");
  return value;
}

/** A required non-empty string field. */
export function readNonEmptyString(o: JsonObject, key: string): string {
  const value = o[key];
  if (typeof value !== "string" || value.length === 0) throw new FieldError(key, "non-empty string");
  return value;
}

/** A required boolean field. */
export function readBoolean(o: JsonObject, key: string): boolean {
  const value = o[key];
  if (typeof value !== "boolean") throw new FieldError(key, "boolean");
  return value;
}

/** A required finite number field (fractions such as funding rates). */
export function readFiniteNumber(o: JsonObject, key: string): number {
  const value = o[key];
  if (typeof value !== "number" || !Number.isFinite(value)) throw new FieldError(key, "finite number");
  return value;
}

/** A required non-negative integer that a double represents exactly (≤ 2^53 - 1). */
export function readCount(o: JsonObject, key: string): number {
  const value = o[key];
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new FieldError(key, "non-negative safe integer");
  }
  return value;
}

/** A required `decimals` field: an integer 0..77. */
export function readDecimals(o: JsonObject, key: string): number {
  const value = o[key];
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_DECIMALS) {
    throw new FieldError(key, `integer 0..${MAX_DECIMALS}`);
  }
  return value;
}

/** A required unix timestamp in seconds, returned in milliseconds. */
export function readSecondsAsMs(o: JsonObject, key: string): number {
  return readCount(o, key) * 1000;
}

/** A required timestamp sent as seconds (spec) or milliseconds (live server), told apart by magnitude; returned in ms. */
export function readSecondsOrMs(o: JsonObject, key: string): number {
  const value = readCount(o, key);
  return value < SECONDS_MS_BOUNDARY ? value * 1000 : value;
}

/** A required 0x-prefixed hex integer string (at most 64 digits), returned as an exact ScaledPrice. */
export function readHexPrice(o: JsonObject, key: string, decimals: number): ScaledPrice {
  const value = o[key];
  const price = typeof value === "string" ? ScaledPrice.fromHex(value, decimals) : null;
  if (price === null) throw new FieldError(key, "0x-prefixed hex string");
  return price;
}

/** A required decimal-digit integer string (candle OHLC), returned as an exact ScaledPrice. */
export function readDecimalPrice(o: JsonObject, key: string, decimals: number): ScaledPrice {
  const value = o[key];
  if (typeof value === "string" && value.length <= MAX_DECIMAL_DIGITS && DECIMAL_DIGITS.test(value)) {
    return new ScaledPrice(BigInt(value), decimals);
  }
  throw new FieldError(key, "decimal integer string");
}

/** A required ISO 8601 date-time; without a zone designator it is UTC. Returned in ms. */
export function readIsoTimeMs(o: JsonObject, key: string): number {
  const value = o[key];
  if (typeof value === "string") {
    const match = ISO_DATE_TIME.exec(value);
    if (match !== null) {
      const ms = Date.parse(match[1] === undefined ? `${value}Z` : value);
      if (Number.isFinite(ms)) return ms;
    }
  }
  throw new FieldError(key, "ISO 8601 date-time");
}

/*
 * Lenient readers, for fields a monitor does not judge (vault metadata): absent, null or of another
 * type all read as null, so one odd field never costs the snapshot.
 */

/** An optional string field; anything but a string reads as null. */
export function readLenientString(o: JsonObject, key: string): string | null {
  const value = o[key];
  return typeof value === "string" ? value : null;
}

/** An optional number field (integer or not); anything but a finite number reads as null. */
export function readLenientNumber(o: JsonObject, key: string): number | null {
  const value = o[key];
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** An optional boolean field; anything but a boolean reads as null. */
export function readLenientBoolean(o: JsonObject, key: string): boolean | null {
  const value = o[key];
  return typeof value === "boolean" ? value : null;
}

/** An optional nested object; absent, null or not an object reads as an empty object. */
export function readLenientObject(o: JsonObject, key: string): JsonObject {
  const value = o[key];
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : {};
}

/** A boolean that may be absent or null (read as null, unknown), but is a boolean whenever it is sent. */
export function readNullableBoolean(o: JsonObject, key: string): boolean | null {
  const value = o[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== "boolean") throw new FieldError(key, "boolean or null");
  return value;
}
