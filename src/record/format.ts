// The recording format (docs/recording.md): one JSON object per line, gzip-compressed, version 1; parsing with a reason per bad line.
import { z } from "zod";
import { sameStrings } from "../domain/lists.js";

/** Version of the line format; a reader refuses lines of another version. */
export const RECORDING_FORMAT_VERSION = 1;

/** File names of a recording: `rec-<start, compact ISO>-<part>.jsonl.gz`, so name order is time order. */
export const RECORDING_FILE_PATTERN = /^rec-\d{8}T\d{9}Z-\d{6}\.jsonl\.gz$/;

const target = z.string().min(1);
const atMs = z.number().finite();

/** First line of every file: who wrote it and when. */
const fileLine = z.object({
  type: z.literal("file"),
  v: z.literal(RECORDING_FORMAT_VERSION),
  atMs,
  part: z.number().int().positive(),
  version: z.string(),
});

/** The pipeline started: its alert ticks run every `tickMs` from `atMs`. */
const startLine = z.object({
  type: z.literal("start"),
  atMs,
  tickMs: z.number().int().positive(),
  upstream: z.string(),
});

/** One HTTP attempt as received: status and raw body, or the error code when no response came. */
const responseLine = z.object({
  type: z.literal("response"),
  atMs,
  requestAtMs: atMs,
  target: target.nullable(),
  purpose: z.enum(["poll", "warmup"]).nullable(),
  endpoint: z.string(),
  url: z.string(),
  status: z.number().int().nullable(),
  error: z.string().nullable(),
  body: z.string().nullable(),
});

/** A poll's outcome as the pipeline fed it to the alert engine (its body is the target's last response). */
const pollLine = z.object({
  type: z.literal("poll"),
  atMs,
  target,
  ok: z.boolean(),
  code: z.string().optional(),
  message: z.string().optional(),
  retryable: z.boolean().optional(),
  /** The daemon's own stall held verdicts: the failure was not fed. */
  held: z.boolean().optional(),
});

/** Warm-up history fed to a target from its last candlestick response. */
const warmupLine = z.object({
  type: z.literal("warmup"),
  atMs,
  target,
  interval: z.string(),
  lookbackMs: z.number().nonnegative(),
  /** The time the candles were cut at (the warm-up's own clock reading). */
  asOfMs: atMs,
});

/** One SSE message as received from the price stream. */
const sseLine = z.object({
  type: z.literal("sse"),
  atMs,
  url: z.string(),
  event: z.string(),
  data: z.string(),
});

/** What the stream delivered to one target: a price (by its timestamp), its history, or staleness. */
const streamLine = z.object({
  type: z.literal("stream"),
  atMs,
  target,
  event: z.enum(["price", "history", "stale"]),
  timestampMs: z.number().optional(),
  code: z.string().optional(),
  message: z.string().optional(),
});

const recordLine = z.discriminatedUnion("type", [
  fileLine,
  startLine,
  responseLine,
  pollLine,
  warmupLine,
  sseLine,
  streamLine,
]);

/** One line of a recording. */
export type RecordLine = z.infer<typeof recordLine>;
/** One line of a given type. */
export type RecordLineOf<T extends RecordLine["type"]> = Extract<RecordLine, { type: T }>;

/** A parsed line, or why it is not one. */
export type ParsedLine =
  { readonly ok: true; readonly line: RecordLine } | { readonly ok: false; readonly reason: string };

/** Parse one line of text; never throws. */
export function parseRecordLine(text: string): ParsedLine {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  return checkRecordJson(json);
}

/** Check one line's parsed JSON against the format (parseRecordLine after JSON.parse); never throws. */
export function checkRecordJson(json: unknown): ParsedLine {
  const quick = quickLine(json);
  if (quick !== null) return { ok: true, line: quick };
  const parsed = recordLine.safeParse(json);
  if (parsed.success) return { ok: true, line: parsed.data };
  const issue = parsed.error.issues[0];
  const path = issue === undefined || issue.path.length === 0 ? "line" : issue.path.join(".");
  return { ok: false, reason: `${path}: ${issue?.message ?? "invalid"}` };
}

/**
 * The two lines of every poll (response, poll) checked by hand: zod's check cost about half as much as JSON.parse
 * on a replay's hot path. It accepts only what the schema accepts with no key left to strip, so its line is the
 * one zod would return; anything else (other types, extra keys, a bad field) goes to zod, whose message names the
 * field.
 */
function quickLine(json: unknown): RecordLine | null {
  if (typeof json !== "object" || json === null) return null;
  const o = json as Record<string, unknown>;
  if (o["type"] === "response") return isQuickResponse(o) ? (o as RecordLineOf<"response">) : null;
  if (o["type"] === "poll") return isQuickPoll(o) ? (o as RecordLineOf<"poll">) : null;
  return null;
}

const isString = (value: unknown): value is string => typeof value === "string";
const isStringOrNull = (value: unknown): boolean => value === null || typeof value === "string";
const isFiniteNumber = (value: unknown): boolean => typeof value === "number" && Number.isFinite(value);
const isTarget = (value: unknown): boolean => typeof value === "string" && value.length > 0;

/** The response schema's fields, all present, and no other key. */
function isQuickResponse(o: Record<string, unknown>): boolean {
  return Object.keys(o).length === RESPONSE_KEYS.length && hasResponseFields(o);
}

/** The response schema's fields, all present (whatever other keys there are). */
function hasResponseFields(o: Record<string, unknown>): boolean {
  const { status, purpose } = o;
  return (
    isFiniteNumber(o["atMs"]) &&
    isFiniteNumber(o["requestAtMs"]) &&
    (o["target"] === null || isTarget(o["target"])) &&
    (purpose === null || purpose === "poll" || purpose === "warmup") &&
    isString(o["endpoint"]) &&
    isString(o["url"]) &&
    (status === null || Number.isSafeInteger(status)) &&
    isStringOrNull(o["error"]) &&
    isStringOrNull(o["body"])
  );
}

/** The poll schema's fields (its optional ones when present), and no other key. */
function isQuickPoll(o: Record<string, unknown>): boolean {
  if (!hasPollFields(o)) return false;
  let keys = 4;
  for (const [name, type] of POLL_OPTIONAL) {
    const value = o[name];
    if (value === undefined) continue;
    if (typeof value !== type) return false;
    keys += 1;
  }
  return Object.keys(o).length === keys;
}

/** The poll schema's required fields, all present (whatever other keys there are). */
function hasPollFields(o: Record<string, unknown>): boolean {
  return isFiniteNumber(o["atMs"]) && isTarget(o["target"]) && typeof o["ok"] === "boolean";
}

/** The poll line's optional fields and their types. */
const POLL_OPTIONAL = [
  ["code", "string"],
  ["message", "string"],
  ["retryable", "boolean"],
  ["held", "boolean"],
] as const;

/** The keys of a response line, in the order the recorder writes them (a test holds the recorder to it). */
export const RESPONSE_KEYS = [
  "type",
  "atMs",
  "requestAtMs",
  "target",
  "purpose",
  "endpoint",
  "url",
  "status",
  "error",
  "body",
] as const;
/** The keys of a successful poll line, in the order the recorder writes them (a test holds the recorder to it). */
export const OK_POLL_KEYS = ["type", "atMs", "target", "ok"] as const;

/**
 * Checks a flat JSON object handed over as its values, `values[start…]` in the order of `keys`: what checkRecordJson
 * gives that object (an equal line, its keys in the same order, or the same reason).
 */
export type FlatLineCheck = (values: readonly unknown[], start: number) => ParsedLine;

/**
 * The check of flat objects with `keys` (one per shape of line, made once): for the two lines of every poll in the
 * recorder's key order, the object is built as a literal and checked by hand (no per-key stores, no Object.keys, a
 * replay's hot path); any other shape is rebuilt key by key for checkRecordJson.
 */
export function flatLineCheck(keys: readonly string[]): FlatLineCheck {
  if (sameStrings(keys, RESPONSE_KEYS)) return responseFromValues;
  if (sameStrings(keys, OK_POLL_KEYS)) return okPollFromValues;
  return (values, start) => {
    const json: Record<string, unknown> = {};
    for (let k = 0; k < keys.length; k++) json[keys[k]!] = values[start + k];
    return checkRecordJson(json);
  };
}

/** A flat object with RESPONSE_KEYS, checked (checkRecordJson's result for it). */
function responseFromValues(v: readonly unknown[], i: number): ParsedLine {
  const json = {
    type: v[i],
    atMs: v[i + 1],
    requestAtMs: v[i + 2],
    target: v[i + 3],
    purpose: v[i + 4],
    endpoint: v[i + 5],
    url: v[i + 6],
    status: v[i + 7],
    error: v[i + 8],
    body: v[i + 9],
  };
  // its keys are exactly the schema's, so the fields decide (quickLine's verdict for it)
  if (json.type === "response" && hasResponseFields(json))
    return { ok: true, line: json as RecordLineOf<"response"> };
  return checkRecordJson(json);
}

/** A flat object with OK_POLL_KEYS, checked (checkRecordJson's result for it). */
function okPollFromValues(v: readonly unknown[], i: number): ParsedLine {
  const json = { type: v[i], atMs: v[i + 1], target: v[i + 2], ok: v[i + 3] };
  // no optional field and no other key, so the fields decide (quickLine's verdict for it)
  if (json.type === "poll" && hasPollFields(json)) return { ok: true, line: json as RecordLineOf<"poll"> };
  return checkRecordJson(json);
}

/** The name of part `part` of a recording started at `startMs`. */
export function recordingFileName(startMs: number, part: number): string {
  const stamp = new Date(startMs).toISOString().replace(/[-:.]/g, "");
  return `rec-${stamp}-${String(part).padStart(6, "0")}.jsonl.gz`;
}
