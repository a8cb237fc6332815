// A target's recent price points ride in its ownership key's handover record (on release, and periodically while held), so the new owner's windows reach back across the move.
import { PmError } from "../domain/errors.js";
import { fnv1a64Hex } from "../domain/fingerprint.js";
import { exportHistories, historyVersions, type MonitorState } from "../domain/monitor.js";
import type { PricePoint } from "../domain/price-history.js";
import {
  decodePricePoints,
  encodePricePoints,
  MAX_ENCODED_POINTS_CHARS,
} from "../domain/price-points-codec.js";

/** The `history` field of a key's record: each of its targets' points (`encodePricePoints` text) by target id. */
export type HistoryField = Readonly<Record<string, string>>;

/** Why a record's history (or one target's part of it) was refused: the `reason` label of the counter. */
export type HistoryRejection = "malformed" | "oversized";

/** A record's history as read: the points of each target it carries, and what was refused. */
export interface RecordHistory {
  readonly points: ReadonlyMap<string, readonly PricePoint[]>;
  readonly rejected: readonly {
    readonly targetId: string | null;
    readonly reason: HistoryRejection;
    readonly error: PmError;
  }[];
}

/**
 * The history field of each of `keys`, from the engine's histories now (undefined: no target of the key has points);
 * only targets whose longest window is at least `minRetainMs`. Reads only the keys' own targets.
 */
export function historyFieldsByKey(
  state: MonitorState,
  targetsOfKey: (key: string) => readonly string[],
  keys: ReadonlySet<string>,
  nowMs: number,
  minRetainMs = 0,
): (key: string) => HistoryField | undefined {
  const byKey = new Map<string, HistoryField>();
  for (const key of keys) {
    const histories = exportHistories(state, nowMs, targetsOfKey(key), minRetainMs);
    if (histories.size === 0) continue;
    const field: Record<string, string> = {};
    for (const [targetId, points] of histories) field[targetId] = encodePricePoints(points);
    byKey.set(key, field);
  }
  return (key) => byKey.get(key);
}

/**
 * A token of each of `keys`' points (its targets' `historyVersions`, those whose longest window is at least
 * `minRetainMs`; "" when none): the same token, the same points, so they need not be read and encoded again.
 * Reads only the keys' own targets: a pass with few keys due costs few targets, whatever the member holds.
 */
export function historyVersionsByKey(
  state: MonitorState,
  targetsOfKey: (key: string) => readonly string[],
  keys: ReadonlySet<string>,
  minRetainMs: number,
): (key: string) => string {
  const byKey = new Map<string, string>();
  for (const key of keys) {
    let token = "";
    for (const [targetId, version] of historyVersions(state, targetsOfKey(key), minRetainMs))
      token += `${targetId}=${version};`;
    byKey.set(key, token);
  }
  return (key) => byKey.get(key) ?? "";
}

/**
 * The points a record carries for the key's own targets. A record without `history` (written before handovers
 * carried it, or by a member killed before it wrote any) carries none; a `history` that is not an object of
 * strings, or a target's text over the limit or not in the format, is rejected (that target alone when it can be).
 */
export function historyOfRecord(
  text: string,
  key: string,
  keyOfTarget: (targetId: string) => string | undefined,
): RecordHistory {
  const points = new Map<string, readonly PricePoint[]>();
  const rejected: RecordHistory["rejected"][number][] = [];
  const field = historyFieldOf(text);
  if (field === undefined) return { points, rejected };
  if (field === null || typeof field !== "object" || Array.isArray(field)) {
    const error = new PmError("PM_ERR_STATE", "price history: not an object of target ids");
    return { points, rejected: [{ targetId: null, reason: "malformed", error }] };
  }
  for (const [targetId, encoded] of Object.entries(field)) {
    if (keyOfTarget(targetId) !== key) continue; // a target since moved to another key, or removed
    try {
      if (typeof encoded !== "string") throw new PmError("PM_ERR_STATE", "price points: not text");
      points.set(targetId, decodePricePoints(encoded));
    } catch (error) {
      if (!(error instanceof PmError)) throw error;
      const oversized = typeof encoded === "string" && encoded.length > MAX_ENCODED_POINTS_CHARS;
      rejected.push({ targetId, reason: oversized ? "oversized" : "malformed", error });
    }
  }
  return { points, rejected };
}

/** The history field of the points `history` holds per target (what a claim writes back). */
export function historyField(history: readonly (readonly [string, readonly PricePoint[]])[]): HistoryField {
  return Object.fromEntries(history.map(([targetId, points]) => [targetId, encodePricePoints(points)]));
}

/** The record's `history` value (undefined when absent); the record itself was validated as JSON before. */
function historyFieldOf(text: string): unknown {
  const record = JSON.parse(text) as unknown;
  return record !== null && typeof record === "object" && "history" in record ? record.history : undefined;
}

/**
 * Most bytes a key's whole record (alert state and price points) may take: a KV value is at most 1 MiB (NATS's
 * default `max_payload`), and the alert state must never be refused for its points.
 */
export const RECORD_BUDGET_BYTES = 512 * 1024;

/** A history field cut to a budget, and how many targets' points were left out. */
export interface CappedHistory {
  readonly field: HistoryField;
  readonly trimmedTargets: number;
}

/**
 * `field` in at most `budgetBytes` bytes of record JSON (the `,"history":{…}` it adds): whole when it fits, else
 * the points of the largest targets are left out first, so as many targets as possible keep theirs.
 */
export function capHistoryField(field: HistoryField, budgetBytes: number): CappedHistory {
  const entries = Object.entries(field).map(([targetId, encoded]) => ({
    targetId,
    encoded,
    // `"id":"text",` in the record
    bytes: Buffer.byteLength(JSON.stringify(targetId)) + Buffer.byteLength(JSON.stringify(encoded)) + 2,
  }));
  let spentBytes = FIELD_OVERHEAD_BYTES;
  for (const entry of entries) spentBytes += entry.bytes;
  if (spentBytes <= budgetBytes) return { field, trimmedTargets: 0 };
  const kept: Record<string, string> = {};
  spentBytes = FIELD_OVERHEAD_BYTES;
  const bySize = entries.sort((a, b) => a.bytes - b.bytes || (a.targetId < b.targetId ? -1 : 1));
  for (const entry of bySize) {
    if (spentBytes + entry.bytes > budgetBytes) break;
    kept[entry.targetId] = entry.encoded;
    spentBytes += entry.bytes;
  }
  return { field: kept, trimmedTargets: entries.length - Object.keys(kept).length };
}

/** `,"history":{}`: what the field costs a record before its first target. */
const FIELD_OVERHEAD_BYTES = 13;

/**
 * When a key's points are next due to be checkpointed: the first instant after `afterMs` at the key's own phase
 * of `intervalMs` (a hash of the key), so the keys of a member spread their writes over the interval instead of
 * all writing at once. Infinity when periodic checkpoints are off (`intervalMs` 0).
 */
export function nextHistoryDueMs(key: string, afterMs: number, intervalMs: number): number {
  if (intervalMs <= 0) return Number.POSITIVE_INFINITY;
  const phaseMs = Number.parseInt(fnv1a64Hex(key).slice(-8), 16) % intervalMs;
  const sinceDueMs = (((afterMs - phaseMs) % intervalMs) + intervalMs) % intervalMs;
  return afterMs - sinceDueMs + intervalMs;
}

/** Whether two history fields hold the same points for the same targets (undefined: no field). */
export function sameHistoryField(a: HistoryField | undefined, b: HistoryField | undefined): boolean {
  // a key not due carries the field it last wrote: the same object, compared at every pass without a copy
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((targetId) => a[targetId] === b[targetId]);
}
