// Durable per-sink outbox: an fsync'd append-only JSON-lines file with ack tombstones, compaction and a dead-letter file.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { Logger } from "pino";
import { ensurePrivateDir, tightenFile } from "../../state/atomic-file.js";
import { openOutboxDisk, type OutboxDisk } from "./outbox-disk.js";
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

/**
 * The outbox of one sink. Mutations are serialised on one writer; `entries()` only shows durable ones. `S` is
 * the sink's own state (its notification groups), written in the same line as the acknowledgement it goes
 * with, so a kill -9 keeps both or neither.
 */
export interface Outbox<P, S = never> {
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
  /** The state last recorded (by `ack` or `deadLetter`), as read back at open; undefined when none. */
  state(): S | undefined;
  /** Forget delivered entries (tombstones), recording `state` with them in one line when given. */
  ack(ids: readonly string[], state?: S): Promise<void>;
  /** Move entries to the dead-letter file, then tombstone them (with `state` when given). */
  deadLetter(
    entries: readonly OutboxEntry<P>[],
    reason: DeadLetterReason,
    nowMs: number,
    state?: S,
  ): Promise<void>;
  /** Wait until every queued write is on disk. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Options of `openOutbox`; `isPayload` validates payloads read back from disk. */
export interface OutboxOptions<P, S = never> {
  readonly dir: string;
  readonly name: string;
  readonly maxEntries: number;
  readonly isPayload: (value: unknown) => value is P;
  /** Validates the state read back from disk; without it, no state is kept. */
  readonly isState?: (value: unknown) => value is S;
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
export async function openOutbox<P, S = never>(options: OutboxOptions<P, S>): Promise<Outbox<P, S>> {
  const { file, deadFile } = prepareFiles(options.dir, options.name);
  const { isPayload, seqOf, logger } = options;
  const isState = options.isState ?? ((_value: unknown): _value is S => false);
  const loaded = loadOutboxFile(file, { isPayload, isState, seqOf }, logger, options.nowMs());
  const state: OutboxState<P, S> = {
    saved: loaded.state,
    live: new Map(loaded.entries.map((entry) => [entry.id, entry])),
    highWater: loaded.existed ? loaded.highWater : options.startHighWater,
    unflushed: [],
    writing: 0,
    deadLines: 0,
    flushQueued: false,
  };
  const disk = await openOutboxDisk({
    file,
    deadFile,
    maxDeadBytes: options.maxDeadLetterBytes ?? DEFAULT_MAX_DEAD_LETTER_BYTES,
    logger,
  });
  await compact(state, disk);
  return createOutboxHandle(state, disk, options);
}

/** The outbox's folder and files (`<name>.jsonl`, `<name>.dead.jsonl`), private: they hold the payloads. */
function prepareFiles(dir: string, name: string): { readonly file: string; readonly deadFile: string } {
  // the outbox folder is the daemon's own: private, and tightened if an older version left it open
  ensurePrivateDir(dir);
  const file = join(dir, `${name}.jsonl`);
  const deadFile = join(dir, `${name}.dead.jsonl`);
  tightenFile(file);
  tightenFile(deadFile);
  return { file, deadFile };
}

/** The in-memory side of an outbox: what is live, what waits for the next group commit, what compaction would drop. */
interface OutboxState<P, S> {
  /** The sink's own state as last recorded (rewritten at compaction). */
  saved: S | undefined;
  readonly live: Map<string, OutboxEntry<P>>;
  highWater: number;
  /** Appended, waiting for the next group commit. */
  unflushed: OutboxEntry<P>[];
  /** Entries of the group commit being written. */
  writing: number;
  /** Superseded and tombstone lines in the file (what a compaction would drop). */
  deadLines: number;
  flushQueued: boolean;
}

/** The public outbox over its state and its disk writer. */
function createOutboxHandle<P, S>(
  state: OutboxState<P, S>,
  disk: OutboxDisk,
  options: OutboxOptions<P, S>,
): Outbox<P, S> {
  const { logger } = options;
  const outbox: Outbox<P, S> = {
    get size() {
      return state.live.size + state.unflushed.length + state.writing;
    },
    get highWater() {
      return state.highWater;
    },
    advance(seq) {
      if (seq > state.highWater) state.highWater = seq;
    },
    entries: () => [...state.live.values()],
    state: () => state.saved,
    append(payload, nowMs) {
      if (outbox.size >= options.maxEntries) {
        const oldest = state.live.values().next().value ?? state.unflushed.shift();
        if (oldest !== undefined) {
          logger.warn({ maxEntries: options.maxEntries }, "outbox full: oldest message moved to dead letter");
          void outbox.deadLetter([oldest], "overflow", nowMs);
        }
      }
      state.highWater = Math.max(state.highWater, options.seqOf(payload));
      state.unflushed.push({
        id: randomUUID(),
        createdAtMs: nowMs,
        payload,
        attempts: 0,
        nextAttemptAtMs: nowMs,
      });
      if (!state.flushQueued) {
        state.flushQueued = true;
        void disk.run(() => flushAppends(state, disk, options.onDurable));
      }
    },
    reschedule(updated) {
      const present = updated.filter((entry) => state.live.has(entry.id));
      for (const entry of present) state.live.set(entry.id, entry);
      state.deadLines += present.length;
      return afterWrite(
        state,
        disk,
        disk.run(() => disk.append(present.map(line))),
      );
    },
    ack: (ids, saved) => ackEntries(state, disk, ids, saved),
    deadLetter(entries, reason, nowMs, saved) {
      const removed = entries.filter(
        (entry) => state.live.delete(entry.id) || dropUnflushed(state, entry.id),
      );
      if (saved !== undefined) state.saved = saved;
      if (removed.length === 0 && saved === undefined) return Promise.resolve();
      state.deadLines += removed.length * 2;
      if (removed.length > 0) {
        options.onDeadLetter(removed.length, reason);
        logger.warn({ count: removed.length, reason }, "messages moved to the dead-letter file");
      }
      return afterWrite(
        state,
        disk,
        disk.run(() => writeDead(disk, removed, reason, nowMs, saved)),
      );
    },
    flush: () => disk.run(() => Promise.resolve()),
    async close() {
      // Leave a tidy file after a graceful stop: only what is still pending.
      await disk.run(() => (state.deadLines > 0 ? compact(state, disk) : Promise.resolve()));
      await disk.close();
    },
  };
  return outbox;
}

/** Tombstone delivered entries, with the sink's state in the same line when given. */
function ackEntries<P, S>(
  state: OutboxState<P, S>,
  disk: OutboxDisk,
  ids: readonly string[],
  saved: S | undefined,
): Promise<void> {
  const present = ids.filter((id) => state.live.delete(id));
  state.deadLines += present.length * 2;
  const lines = tombstones(present, saved);
  if (saved !== undefined) {
    state.saved = saved;
    // a state line supersedes the previous one: count it by its size, so big states compact sooner
    state.deadLines += Math.ceil((lines[0]?.length ?? 0) / 1024);
  }
  return afterWrite(
    state,
    disk,
    disk.run(() => disk.append(lines)),
  );
}

/** Group commit: write every entry appended since the last one, then show them in `entries()`. */
async function flushAppends<P, S>(
  state: OutboxState<P, S>,
  disk: OutboxDisk,
  onDurable: () => void,
): Promise<void> {
  state.flushQueued = false;
  const batch = state.unflushed;
  state.unflushed = [];
  state.writing = batch.length;
  try {
    await disk.append(batch.map(line));
  } finally {
    // Even if the disk failed, deliver rather than lose: the error was logged by `run`.
    state.writing = 0;
    for (const entry of batch) state.live.set(entry.id, entry);
    if (batch.length > 0) onDurable();
  }
}

/** Queue a compaction once dead lines reach the floor and outnumber live entries; returns `written` unchanged. */
function afterWrite<P, S>(state: OutboxState<P, S>, disk: OutboxDisk, written: Promise<void>): Promise<void> {
  if (state.deadLines >= COMPACT_MIN_DEAD_LINES && state.deadLines > state.live.size)
    void disk.run(() => compact(state, disk));
  return written;
}

/** Rewrite the file as the high-water mark (with the sink's state) and the live entries only. */
async function compact<P, S>(state: OutboxState<P, S>, disk: OutboxDisk): Promise<void> {
  const head =
    state.saved === undefined ? { hw: state.highWater } : { hw: state.highWater, state: state.saved };
  await disk.rewrite(JSON.stringify(head) + "\n" + [...state.live.values()].map(line).join(""));
  state.deadLines = 0;
}

/** Copy entries to the dead-letter file, then tombstone them in the outbox (with the sink's state when given). */
async function writeDead<P, S>(
  disk: OutboxDisk,
  entries: readonly OutboxEntry<P>[],
  reason: DeadLetterReason,
  nowMs: number,
  saved: S | undefined,
): Promise<void> {
  if (entries.length > 0)
    await disk.appendDead(
      entries.map((entry) => JSON.stringify({ ...entry, deadAtMs: nowMs, reason }) + "\n").join(""),
    );
  await disk.append(
    tombstones(
      entries.map((entry) => entry.id),
      saved,
    ),
  );
}

function dropUnflushed<P, S>(state: OutboxState<P, S>, id: string): boolean {
  const before = state.unflushed.length;
  state.unflushed = state.unflushed.filter((entry) => entry.id !== id);
  return state.unflushed.length < before;
}

function line<P>(entry: OutboxEntry<P>): string {
  const { id, createdAtMs, payload, attempts, nextAttemptAtMs, deliveryId } = entry;
  return JSON.stringify({ id, createdAtMs, payload, attempts, nextAttemptAtMs, deliveryId }) + "\n";
}

/**
 * Tombstone lines for `ids`: one `{"ack":"<id>"}` line each, or, with a state, one line
 * `{"ack":[ids…],"state":…}` holding both (a torn last line loses both together, never one of them).
 */
function tombstones<S>(ids: readonly string[], saved: S | undefined): string[] {
  if (saved === undefined) return ids.map((id) => JSON.stringify({ ack: id }) + "\n");
  return [JSON.stringify({ ack: ids, state: saved }) + "\n"];
}
