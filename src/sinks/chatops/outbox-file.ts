// Reading an outbox file back: replay records and tombstones, skip a torn last line, move an unreadable file aside.
import { readFile, rename } from "node:fs/promises";
import type { Logger } from "pino";
import type { OutboxEntry } from "./outbox.js";

class CorruptOutboxError extends Error {}

/** What an outbox file held: its live entries, the highest journal seq it had taken in, and whether it existed. */
export interface LoadedOutbox<P> {
  readonly entries: OutboxEntry<P>[];
  /** Highest `seq` of any entry ever written (delivered ones included) or of a `{"hw":n}` record; 0 if none. */
  readonly highWater: number;
  /** False for a missing file, or one moved aside as unreadable (the sink starts fresh). */
  readonly existed: boolean;
}

/**
 * Load the live entries of `file`, oldest first. A missing file is empty. A torn or corrupt *last* line
 * (crash mid-append) is skipped with a warning; any other damage moves the file to `<file>.corrupt-<ms>`
 * and the sink starts clean.
 */
export async function loadOutboxFile<P>(
  file: string,
  isPayload: (value: unknown) => value is P,
  seqOf: (payload: P) => number,
  logger: Logger,
  nowMs: () => number,
): Promise<LoadedOutbox<P>> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if (isNotFound(err)) return { entries: [], highWater: 0, existed: false };
    return moveAside(file, logger, nowMs, "unreadable");
  }
  try {
    return parseOutbox(text, isPayload, seqOf, logger);
  } catch (err) {
    if (!(err instanceof CorruptOutboxError)) throw err;
    return moveAside(file, logger, nowMs, err.message);
  }
}

/** Replay the lines of an outbox file into its live entries (throws CorruptOutboxError on mid-file damage). */
function parseOutbox<P>(
  text: string,
  isPayload: (value: unknown) => value is P,
  seqOf: (payload: P) => number,
  logger: Logger,
): LoadedOutbox<P> {
  const lines = text.split("\n");
  // A file that ends without "\n" was cut mid-append; the final element is that partial line.
  const lastIndex = lines.length - 1;
  const live = new Map<string, OutboxEntry<P>>();
  let highWater = 0;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? "";
    if (raw.trim() === "") continue;
    const parsed = parseLine(raw, isPayload);
    if (parsed === undefined) {
      const isTail = i === lastIndex || (i === lastIndex - 1 && (lines[lastIndex] ?? "") === "");
      if (!isTail) throw new CorruptOutboxError(`corrupt line ${i + 1}`);
      logger.warn({ line: i + 1 }, "outbox: skipped a torn last line (crash mid-write)");
      continue;
    }
    if ("ack" in parsed) live.delete(parsed.ack);
    else if ("hw" in parsed) highWater = Math.max(highWater, parsed.hw);
    else {
      live.set(parsed.id, parsed);
      highWater = Math.max(highWater, seqOf(parsed.payload));
    }
  }
  return { entries: [...live.values()], highWater, existed: true };
}

function parseLine<P>(
  raw: string,
  isPayload: (value: unknown) => value is P,
): OutboxEntry<P> | { readonly ack: string } | { readonly hw: number } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
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

async function moveAside<P>(
  file: string,
  logger: Logger,
  nowMs: () => number,
  reason: string,
): Promise<LoadedOutbox<P>> {
  const aside = `${file}.corrupt-${nowMs()}`;
  try {
    await rename(file, aside);
    logger.error({ aside, reason }, "outbox file unreadable: moved aside, sink starts with an empty outbox");
  } catch (err) {
    logger.error(
      { reason, code: isNotFound(err) ? "ENOENT" : "rename_failed", err },
      "outbox file unreadable",
    );
  }
  return { entries: [], highWater: 0, existed: false };
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

function isNotFound(err: unknown): boolean {
  return typeof err === "object" && err !== null && "code" in err && err.code === "ENOENT";
}
