// Response values the handlers return (status, content type, body) and the spec's error bodies.
import type { WireEntryError } from "../upstream/wire.js";
import { rfc3339Nanos } from "./format.js";

/** A fully rendered response; the server applies transport faults and writes it. */
export interface SimResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** True when the body depends only on (url, tick, faults) and may be served from the per-tick cache. */
  readonly cacheable?: boolean;
}

export const JSON_TYPE = "application/json";
export const TEXT_TYPE = "text/plain; charset=utf-8";

/** 200 (or `status`) JSON response of a success body; cacheable. */
export function jsonOk(body: unknown, status = 200): SimResponse {
  return { status, contentType: JSON_TYPE, body: JSON.stringify(body), cacheable: true };
}

/** JSON error body `{resource, message, happened_at}` as the entry endpoints send. */
export function entryError(
  status: number,
  message: string,
  nowMs: number,
  resource = "EntryModel",
): SimResponse {
  const body: WireEntryError = { resource, message, happened_at: rfc3339Nanos(nowMs) };
  return { status, contentType: JSON_TYPE, body: JSON.stringify(body) };
}

/** Plain-text 400 for a query string that fails to deserialise (bad enum, bool, integer, missing field). */
export function queryRejection(detail: string): SimResponse {
  return { status: 400, contentType: TEXT_TYPE, body: `Failed to deserialize query string: ${detail}` };
}

/** Plain-text response (unknown route and similar). */
export function plainText(status: number, text: string): SimResponse {
  return { status, contentType: TEXT_TYPE, body: text };
}

/** The spec's future-timestamp message. */
export const FUTURE_TIMESTAMP = "Invalid timestamp: Timestamp range error: End timestamp is in the future";
