// Reading an outbox file back: replay records and tombstones through the one JSONL reader (a damaged file is moved aside).
import type { Logger } from "pino";
import { readJsonlFile } from "../../state/jsonl.js";
import type { OutboxEntry } from "./outbox.js";

/** What an outbox file held: its live entries, the highest journal seq it had taken in, and whether it existed. */
export interface LoadedOutbox<P, S> {
  readonly entries: OutboxEntry<P>[];
  /** The sink's state as last recorded (a `state` on an ack or high-water line); undefined when none. */
  readonly state: S | undefined;
  /** Highest `seq` of any entry ever written (delivered ones included) or of a `{"hw":n}` record; 0 if none. */
  readonly highWater: number;
  /** False for a missing file, or one moved aside as unreadable (the sink starts fresh). */
  readonly existed: boolean;
}

/**
 * One line of an outbox file: an entry (a later one with the same id supersedes it), a tombstone (one id, or
 * several with the sink's state), or a high-water mark (with the sink's state after a compaction).
 */
type OutboxLine<P, S> =
  | OutboxEntry<P>
  | { readonly ack: readonly string[]; readonly state?: S }
  | { readonly hw: number; readonly state?: S };

/** How to read payloads, the sink's state and seqs back. */
export interface OutboxCodec<P, S> {
  readonly isPayload: (value: unknown) => value is P;
  readonly isState: (value: unknown) => value is S;
  readonly seqOf: (payload: P) => number;
}

/**
 * Load the live entries of `file`, oldest first. A missing file is empty. A torn or corrupt *last* line
 * (crash mid-append) is skipped with a warning; any other damage quarantines the file (`quarantinePath`)
 * and the sink starts clean: a lost tombstone would re-send a delivered message.
 */
export function loadOutboxFile<P, S>(
  file: string,
  codec: OutboxCodec<P, S>,
  logger: Logger,
  nowMs: number,
): LoadedOutbox<P, S> {
  const { seqOf } = codec;
  const read = readJsonlFile(file, (value) => decodeLine(value, codec), { badLine: "quarantine" }, nowMs);
  if (read.quarantined !== null) {
    const { movedTo, reason } = read.quarantined;
    logger.error(
      { aside: movedTo, reason },
      "outbox file unreadable: moved aside, sink starts with an empty outbox",
    );
  }
  if (read.skippedLines > 0)
    logger.warn({ skippedLines: read.skippedLines }, "outbox: skipped a torn last line (crash mid-write)");
  const live = new Map<string, OutboxEntry<P>>();
  let highWater = 0;
  let state: S | undefined;
  for (const record of read.records) {
    if ("ack" in record) {
      for (const id of record.ack) live.delete(id);
      if (record.state !== undefined) state = record.state;
    } else if ("hw" in record) {
      highWater = Math.max(highWater, record.hw);
      if (record.state !== undefined) state = record.state;
    } else {
      live.set(record.id, record);
      highWater = Math.max(highWater, seqOf(record.payload));
    }
  }
  return { entries: [...live.values()], state, highWater, existed: read.existed };
}

/** Decode one parsed line; undefined when it is none of the three shapes. */
function decodeLine<P, S>(value: unknown, codec: OutboxCodec<P, S>): OutboxLine<P, S> | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const { isPayload, isState } = codec;
  // a state this version does not read (another build's) is ignored, not a reason to quarantine the entries
  const state = isState(record.state) ? { state: record.state } : {};
  if (typeof record.ack === "string") return { ack: [record.ack] };
  if (Array.isArray(record.ack) && record.ack.every((id) => typeof id === "string"))
    return { ack: record.ack, ...state };
  if (isFiniteNumber(record.hw)) return { hw: record.hw, ...state };
  const { id, createdAtMs, payload, attempts, nextAttemptAtMs, deliveryId } = record;
  if (
    typeof id !== "string" ||
    !isFiniteNumber(createdAtMs) ||
    !isFiniteNumber(attempts) ||
    !isFiniteNumber(nextAttemptAtMs) ||
    !isPayload(payload) ||
    (deliveryId !== undefined && typeof deliveryId !== "string")
  )
    return undefined;
  return {
    id,
    createdAtMs,
    payload,
    attempts,
    nextAttemptAtMs,
    ...(deliveryId === undefined ? {} : { deliveryId }),
  };
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}
