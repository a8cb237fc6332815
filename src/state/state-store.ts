// The daemon's state directory: the durable journal (write-ahead) and the alert-engine checkpoint.
import { join } from "node:path";
import type { Logger } from "pino";
import type { AlertEvent, JournaledEvent } from "../domain/events.js";
import { PmError } from "../domain/errors.js";
import { createJournal, type Journal } from "./journal.js";
import {
  checkpointJson,
  readCheckpoint,
  type AlertCheckpoint,
  type LoadedCheckpoint,
} from "./alert-checkpoint.js";
import { ensurePrivateDir, writeFileAtomic } from "./atomic-file.js";
import { acquireStateLock, type ProcessIdentity } from "./lock-file.js";
import { loadJournalFile, openJournalFile, type JournalFile } from "./journal-file.js";

/** What a restart recovers: the journal ring, the checkpoint, and the alert events journaled after it. */
export interface RecoveredState {
  readonly journal: Journal;
  readonly checkpoint: LoadedCheckpoint | null;
  /** Alert events with seq > checkpoint.lastSeq (announced after the last checkpoint; replay them into the engine). */
  readonly alertsAfterCheckpoint: readonly AlertEvent[];
}

/** Write side of the state directory. */
export interface StateStore {
  readonly recovered: RecoveredState;
  /** Persist one journaled event before it is emitted (the hub's `persist` hook). */
  persistEvent(event: JournaledEvent): void;
  /** Save the alert-engine checkpoint atomically. */
  saveCheckpoint(checkpoint: AlertCheckpoint): void;
  /** fsync the journal (periodic and at shutdown). */
  sync(): void;
  close(): void;
}

/** Open (creating if needed) the state directory, recovering whatever a previous run left, damaged or not. */
export function openStateStore(options: {
  readonly dir: string;
  readonly journalCapacity: number;
  readonly nowMs: () => number;
  readonly logger: Logger;
  /** When given, the directory is locked against a second daemon for as long as the store is open. */
  readonly process?: ProcessIdentity;
}): StateStore {
  const { dir, journalCapacity, nowMs, logger } = options;
  // a new state dir is private; an existing one is the operator's choice (it may be a shared mount)
  ensurePrivateDir(dir, false);
  const lock = options.process === undefined ? undefined : acquireStateLock(dir, options.process);
  const journalPath = join(dir, "journal.jsonl");
  const checkpointPath = join(dir, "alerts.json");

  const loaded = loadJournalFile(journalPath, nowMs());
  if (loaded.quarantinedTo !== null)
    logger.error(
      { movedTo: loaded.quarantinedTo },
      "journal file unreadable: moved aside, starting a new journal",
    );
  if (loaded.skippedLines > 0)
    logger.warn({ skippedLines: loaded.skippedLines }, "journal file had damaged lines: skipped them");

  const checkpoint = readCheckpoint(checkpointPath, nowMs(), logger);
  const journal = createJournal(journalCapacity, loaded.events, loaded.lastSeq);
  const sinceSeq = checkpoint?.lastSeq ?? 0;
  const alertsAfterCheckpoint = loaded.events.filter(
    (e): e is AlertEvent => e.type === "alert" && e.seq > sinceSeq,
  );

  const file: JournalFile = openJournalFile(journalPath);
  let closed = false;
  // start from a compact file: the loaded tail only
  file.compact(journal.entries());
  let compactionQueued = false;
  /** The checkpoint (seq and alert state) last written, as JSON; null before the first write. */
  let lastCheckpoint: string | null = null;
  let compactAfterLines = journalCapacity; // pushed back after a failure: one error line per ring's worth of events
  /** Rewrite the journal file to the ring's tail after the current publish, never inside it. */
  const queueCompaction = (): void => {
    if (compactionQueued) return;
    compactionQueued = true;
    setImmediate(() => {
      if (closed) return;
      file
        .compactInBackground(journal.entries())
        .then(
          () => (compactAfterLines = journalCapacity),
          (error: unknown) => {
            compactAfterLines = file.linesSinceCompaction + journalCapacity;
            logger.error(
              { err: error },
              "journal compaction failed: the file keeps growing until a retry works",
            );
          },
        )
        .finally(() => (compactionQueued = false));
    });
  };

  return {
    recovered: { journal, checkpoint, alertsAfterCheckpoint },
    persistEvent(event) {
      if (closed) throw new PmError("PM_ERR_STATE", `journal closed: event seq ${event.seq} not persisted`);
      file.append(event);
      // the journal file holds about 2× the ring; rewriting it keeps restarts fast. The rewrite (a large
      // write and two fsyncs) runs after this publish, asynchronously: a publish only ever appends a line.
      if (file.linesSinceCompaction > compactAfterLines) queueCompaction();
    },
    saveCheckpoint(next) {
      // the periodic checkpoint mostly repeats the last one (no alert moved): not written again, which would cost a
      // write, two fsyncs and a rename every time for the same content (only `savedAt` would change)
      const content = JSON.stringify(next);
      if (content === lastCheckpoint) return;
      writeFileAtomic(checkpointPath, checkpointJson(next, nowMs()));
      lastCheckpoint = content;
    },
    sync() {
      if (!closed) file.sync();
    },
    close() {
      if (closed) return;
      closed = true;
      file.close();
      lock?.release();
    },
  };
}
