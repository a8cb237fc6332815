// Reading an outbox file back: replay records and tombstones through the one JSONL reader (a damaged file is moved aside).
import type { Logger } from "pino";
import { readJsonlFile } from "../../state/jsonl.js";
import type { OutboxEntry } from "./outbox.js";

/** What an outbox file held: its live entries, the highest journal seq it had taken in, and whether it existed. */
export interface LoadedOutbox<P> {
  readonly entries: OutboxEntry<P>[];
  /** Highest `seq` of any entry ever written (delivered ones included) or of a `{"hw":n}` record; 0 if none. */
  readonly highWater: number;
  /** False for a missing file, or one moved aside as unreadable (the sink starts fresh). */
  readonly existed: boolean;
}

/** One line of an outbox file: an entry (a later one with the same id supersedes it), a tombstone, or a high-water mark. */
type OutboxLine<P> = OutboxEntry<P> | { readonly ack: string } | { readonly hw: number };

/**
 * Load the live entries of `file`, oldest first. A missing file is empty. A torn or corrupt *last* line
 * (crash mid-append) is skipped with a warning; any other damage quarantines the file (`quarantinePath`)
 * and the sink starts clean: a lost tombstone would re-send a delivered message.
 */
export function loadOutboxFile<P>(
  file: string,
  isPayload: (value: unknown) => value is P,
  seqOf: (payload: P) => number,
  logger: Logger,
  nowMs: number,
): LoadedOutbox<P> {
  const read = readJsonlFile(file, (value) => decodeLine(value, isPayload), { badLine: "quarantine" }, nowMs);
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
  for (const record of read.records) {
    if ("ack" in record) live.delete(record.ack);
    else if ("hw" in record) highWater = Math.max(highWater, record.hw);
    else {
      live.set(record.id, record);
      highWater = Math.max(highWater, seqOf(record.payload));
    }
  }
  return { entries: [...live.values()], highWater, existed: read.existed };
}

/** Decode one parsed line; undefined when it is none of the three shapes. */
function decodeLine<P>(value: unknown, isPayload: (value: unknown) => value is P): OutboxLine<P> | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.ack === "string") return { ack: record.ack };
  if (isFiniteNumber(record.hw)) return { hw: record.hw };
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
