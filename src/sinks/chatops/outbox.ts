// Durable per-sink outbox: an fsync'd append-only JSON-lines file with ack tombstones, compaction and a dead-letter file.
import { open, rename, stat, type FileHandle } from "node:fs/promises";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { Logger } from "pino";
import { ensurePrivateDir, PRIVATE_FILE_MODE, tightenFile } from "../../state/atomic-file.js";
import { loadOutboxFile } from "./outbox-file.js";

/** One message waiting for delivery (a line of `<sink>.jsonl`; later lines with the same id supersede it). */
export interface OutboxEntry<P> {
  readonly id: string;
  readonly createdAtMs: number;
  readonly payload: P;
  readonly attempts: number;
  readonly nextAttemptAtMs: number;
  /**
   * Set once the entry was attempted inside a digest: the retry re-sends exactly that digest under this id,
   * so a receiver deduplicating by delivery id never sees the same events under a new id.
   */
  readonly deliveryId?: string;
}

/** Why entries were moved to the dead-letter file. */
export type DeadLetterReason = "max_age" | "overflow" | "rejected";

/** The outbox of one sink. Mutations are serialised on one writer; `entries()` only shows durable ones. */
export interface Outbox<P> {
  /** Entries held, durable or still being written (what `maxEntries` bounds). */
  readonly size: number;
  /** Highest journal seq this outbox has taken in (appended, or skipped as not routed here). */
  readonly highWater: number;
  /** Record that every seq up to `seq` was considered (events not routed to this sink); persisted at compaction. */
  advance(seq: number): void;
  /** Durable entries, oldest first. */
  entries(): readonly OutboxEntry<P>[];
  /** Queue `payload`; it becomes visible in `entries()` once fsync'd (group commit). Never blocks. */
  append(payload: P, nowMs: number): void;
  /** Record new attempt counts / next attempt times of entries. */
  reschedule(updated: readonly OutboxEntry<P>[]): Promise<void>;
  /** Forget delivered entries (tombstones). */
  ack(ids: readonly string[]): Promise<void>;
  /** Move entries to the dead-letter file, then tombstone them. */
  deadLetter(entries: readonly OutboxEntry<P>[], reason: DeadLetterReason, nowMs: number): Promise<void>;
  /** Wait until every queued write is on disk. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Options of `openOutbox`; `isPayload` validates payloads read back from disk. */
export interface OutboxOptions<P> {
  readonly dir: string;
  readonly name: string;
  readonly maxEntries: number;
  readonly isPayload: (value: unknown) => value is P;
  /** The journal seq a payload carries (tracked as the outbox's high-water mark). */
  readonly seqOf: (payload: P) => number;
  /** High-water mark of a sink with no outbox file yet: it starts from "now", not from the journal's start. */
  readonly startHighWater: number;
  readonly logger: Logger;
  readonly nowMs: () => number;
  /** Called after appended entries became durable (wakes the delivery loop). */
  readonly onDurable: () => void;
  /** Called with the number of entries moved to the dead-letter file. */
  readonly onDeadLetter: (count: number, reason: DeadLetterReason) => void;
  readonly maxDeadLetterBytes?: number;
}

/** Compact once this many superseded/tombstone lines exist and they outnumber live entries. */
const COMPACT_MIN_DEAD_LINES = 256;
const DEFAULT_MAX_DEAD_LETTER_BYTES = 16 * 1024 * 1024;

/** Open (load, repair, compact) the outbox `<dir>/<name>.jsonl`. */
export async function openOutbox<P>(options: OutboxOptions<P>): Promise<Outbox<P>> {
  const { dir, name, logger } = options;
  // the outbox folder is the daemon's own: private, and tightened if an older version left it open
  ensurePrivateDir(dir);
  const file = join(dir, `${name}.jsonl`);
  const deadFile = join(dir, `${name}.dead.jsonl`);
  tightenFile(file);
  tightenFile(deadFile);
  const maxDeadBytes = options.maxDeadLetterBytes ?? DEFAULT_MAX_DEAD_LETTER_BYTES;
  const loaded = await loadOutboxFile(file, options.isPayload, options.seqOf, logger, options.nowMs);
  const live = new Map<string, OutboxEntry<P>>(loaded.entries.map((entry) => [entry.id, entry]));
  let highWater = loaded.existed ? loaded.highWater : options.startHighWater;
  let unflushed: OutboxEntry<P>[] = [];
  let writing = 0;
  let deadLines = 0;
  let chain: Promise<void> = Promise.resolve();
  let flushQueued = false;
  let handle: FileHandle | undefined;
  let deadBytes = await stat(deadFile).then(
    (s) => s.size,
    () => 0,
  );

  const run = (op: () => Promise<void>): Promise<void> => {
    const next = chain.then(op).catch((err: unknown) => {
      logger.error({ code: errorCode(err), err }, "outbox write failed");
    });
    chain = next;
    return next;
  };
  const appendLines = async (lines: readonly string[]): Promise<void> => {
    if (lines.length === 0) return;
    handle ??= await open(file, "a", PRIVATE_FILE_MODE);
    await handle.appendFile(lines.join(""));
    await handle.sync();
  };
  const compact = async (): Promise<void> => {
    const tmp = `${file}.tmp`;
    const out = await open(tmp, "w", PRIVATE_FILE_MODE);
    try {
      await out.writeFile(JSON.stringify({ hw: highWater }) + "\n" + [...live.values()].map(line).join(""));
      await out.sync();
    } finally {
      await out.close();
    }
    await rename(tmp, file);
    await syncDir(dir);
    await handle?.close();
    handle = await open(file, "a", PRIVATE_FILE_MODE);
    deadLines = 0;
  };
  const maybeCompact = (): void => {
    if (deadLines >= COMPACT_MIN_DEAD_LINES && deadLines > live.size) void run(compact);
  };
  const flushAppends = async (): Promise<void> => {
    flushQueued = false;
    const batch = unflushed;
    unflushed = [];
    writing = batch.length;
    try {
      await appendLines(batch.map(line));
    } finally {
      // Even if the disk failed, deliver rather than lose: the error was logged by `run`.
      writing = 0;
      for (const entry of batch) live.set(entry.id, entry);
      if (batch.length > 0) options.onDurable();
    }
  };
  const writeDead = async (entries: readonly OutboxEntry<P>[], reason: DeadLetterReason, nowMs: number) => {
    const text = entries
      .map((entry) => JSON.stringify({ ...entry, deadAtMs: nowMs, reason }) + "\n")
      .join("");
    if (deadBytes + text.length > maxDeadBytes && deadBytes > 0) {
      await rename(deadFile, `${deadFile}.1`);
      deadBytes = 0;
    }
    const out = await open(deadFile, "a", PRIVATE_FILE_MODE);
    try {
      await out.appendFile(text);
      await out.sync();
    } finally {
      await out.close();
    }
    deadBytes += text.length;
    await appendLines(entries.map((entry) => tombstone(entry.id)));
  };

  const dropUnflushed = (id: string): boolean => {
    const before = unflushed.length;
    unflushed = unflushed.filter((entry) => entry.id !== id);
    return unflushed.length < before;
  };

  await compact();
  const outbox: Outbox<P> = {
    get size() {
      return live.size + unflushed.length + writing;
    },
    get highWater() {
      return highWater;
    },
    advance(seq) {
      if (seq > highWater) highWater = seq;
    },
    entries: () => [...live.values()],
    append(payload, nowMs) {
      if (outbox.size >= options.maxEntries) {
        const oldest = live.values().next().value ?? unflushed.shift();
        if (oldest !== undefined) {
          logger.warn({ maxEntries: options.maxEntries }, "outbox full: oldest message moved to dead letter");
          void outbox.deadLetter([oldest], "overflow", nowMs);
        }
      }
      highWater = Math.max(highWater, options.seqOf(payload));
      unflushed.push({ id: randomUUID(), createdAtMs: nowMs, payload, attempts: 0, nextAttemptAtMs: nowMs });
      if (!flushQueued) {
        flushQueued = true;
        void run(flushAppends);
      }
    },
    reschedule(updated) {
      const present = updated.filter((entry) => live.has(entry.id));
      for (const entry of present) live.set(entry.id, entry);
      deadLines += present.length;
      const done = run(() => appendLines(present.map(line)));
      maybeCompact();
      return done;
    },
    ack(ids) {
      const present = ids.filter((id) => live.delete(id));
      deadLines += present.length * 2;
      const done = run(() => appendLines(present.map(tombstone)));
      maybeCompact();
      return done;
    },
    deadLetter(entries, reason, nowMs) {
      const removed = entries.filter((entry) => live.delete(entry.id) || dropUnflushed(entry.id));
      if (removed.length === 0) return Promise.resolve();
      deadLines += removed.length * 2;
      options.onDeadLetter(removed.length, reason);
      logger.warn({ count: removed.length, reason }, "messages moved to the dead-letter file");
      const done = run(() => writeDead(removed, reason, nowMs));
      maybeCompact();
      return done;
    },
    flush: () => run(() => Promise.resolve()),
    async close() {
      // Leave a tidy file after a graceful stop: only what is still pending.
      await run(() => (deadLines > 0 ? compact() : Promise.resolve()));
      await handle?.close();
      handle = undefined;
    },
  };
  return outbox;
}

function line<P>(entry: OutboxEntry<P>): string {
  const { id, createdAtMs, payload, attempts, nextAttemptAtMs, deliveryId } = entry;
  return JSON.stringify({ id, createdAtMs, payload, attempts, nextAttemptAtMs, deliveryId }) + "\n";
}

function tombstone(id: string): string {
  return JSON.stringify({ ack: id }) + "\n";
}

async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Directory fsync is unsupported on some platforms; the rename itself is still atomic.
  }
}

/** The `code` of a Node error, or "unknown" (messages may contain paths, codes never do). */
export function errorCode(err: unknown): string {
  return typeof err === "object" && err !== null && "code" in err && typeof err.code === "string"
    ? err.code
    : "unknown";
}

/** Path helpers for tests and docs. */
export const outboxPaths = (dir: string, name: string) =>
  ({ file: join(dir, `${name}.jsonl`), deadFile: join(dir, `${name}.dead.jsonl`) }) as const;
