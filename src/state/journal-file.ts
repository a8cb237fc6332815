// The journal on disk: one JSON line per journaled event, written before the event is emitted, compacted atomically.
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { JournaledEvent } from "../domain/events.js";
import {
  ensurePrivateDir,
  fsyncDirectory,
  PRIVATE_FILE_MODE,
  tightenFile,
  writeFileAtomic,
} from "./atomic-file.js";
import { readJsonlFile } from "./jsonl.js";
import { parseJournaledEvent } from "./event-schema.js";

/** What was recovered from the journal file at start. */
export interface LoadedJournal {
  readonly events: readonly JournaledEvent[];
  readonly lastSeq: number;
  /** Lines that could not be parsed (a write cut short by kill -9 leaves at most one, at the end). */
  readonly skippedLines: number;
  /** Set when the whole file was unreadable and moved aside. */
  readonly quarantinedTo: string | null;
}

/** Append-side handle of the journal file. */
export interface JournalFile {
  /** Append one event (synchronous write, so it is on disk before anyone sees the event). */
  append(event: JournaledEvent): void;
  /** Rewrite the file with just `events` (atomic, synchronous): at start, before anything is published. */
  compact(events: readonly JournaledEvent[]): void;
  /**
   * The same rewrite off the publish path: `events` is written and fsync'd asynchronously while appends go on
   * to the old file; then, in one synchronous step, the lines appended meanwhile are copied to the new file, it
   * replaces the old one and appends move to it. Resolves false when the file was closed meanwhile.
   * One compaction at a time: a call while one runs returns the running one.
   */
  compactInBackground(events: readonly JournaledEvent[]): Promise<boolean>;
  /** Lines appended since the last compaction. */
  readonly linesSinceCompaction: number;
  /** fsync pending appends (called periodically and at shutdown; kill -9 alone loses nothing already written). */
  sync(): void;
  close(): void;
}

/** Read the journal file, keeping every parseable event in seq order and skipping damaged lines. */
export function loadJournalFile(path: string, nowMs: number): LoadedJournal {
  const read = readJsonlFile(path, parseJournaledEvent, { badLine: "skip" }, nowMs);
  const events: JournaledEvent[] = [];
  let lastSeq = 0;
  for (const event of read.records) {
    if (event.seq <= lastSeq) continue; // out of order: counted below as skipped
    events.push(event);
    lastSeq = event.seq;
  }
  return {
    events,
    lastSeq,
    skippedLines: read.skippedLines + read.records.length - events.length,
    quarantinedTo: read.quarantined?.movedTo ?? null,
  };
}

/** Open the journal file for appending (created if missing). */
export function openJournalFile(path: string): JournalFile {
  ensurePrivateDir(dirname(path), false);
  tightenFile(path);
  let fd = openSync(path, "a", PRIVATE_FILE_MODE);
  let linesSinceCompaction = 0;
  let dirty = false;
  let closed = false;
  let running: Promise<boolean> | undefined;
  // lines appended while a compaction writes the new file (bounded by the events of one compaction's duration)
  let appendedDuringCompaction: string[] | undefined;
  // one fixed name (the directory is locked to one daemon): a kill -9 mid-compaction leaves one stray file, overwritten next time
  const temp = join(dirname(path), `.${basename(path)}.compact.tmp`);

  const compactAsync = async (head: readonly JournaledEvent[]): Promise<boolean> => {
    appendedDuringCompaction = [];
    const text = linesOf(head);
    let replaced = false;
    const out = await open(temp, "w", PRIVATE_FILE_MODE).catch((error: unknown) => {
      appendedDuringCompaction = undefined;
      throw error;
    });
    try {
      await out.writeFile(text);
      await out.sync();
      if (closed) return false;
      // synchronous from here to the fd swap: no append can land in the old file after its tail was copied
      const tail = appendedDuringCompaction;
      if (tail.length > 0) writeSync(out.fd, tail.join(""));
      renameSync(temp, path);
      replaced = true;
      const previous = fd;
      fd = openSync(path, "a", PRIVATE_FILE_MODE);
      closeSync(previous);
      linesSinceCompaction = tail.length;
      dirty = tail.length > 0; // the copied tail is fsync'd by the next sync(), like any append
    } finally {
      appendedDuringCompaction = undefined;
      await out.close();
      if (!replaced) rmSync(temp, { force: true });
    }
    fsyncDirectory(dirname(path));
    return true;
  };

  return {
    append(event) {
      const line = `${JSON.stringify(event)}\n`;
      writeSync(fd, line);
      appendedDuringCompaction?.push(line);
      linesSinceCompaction++;
      dirty = true;
    },
    compact(events) {
      writeFileAtomic(path, linesOf(events));
      closeSync(fd);
      fd = openSync(path, "a", PRIVATE_FILE_MODE);
      linesSinceCompaction = 0;
      dirty = false;
    },
    compactInBackground(events) {
      running ??= compactAsync(events).finally(() => (running = undefined));
      return running;
    },
    get linesSinceCompaction() {
      return linesSinceCompaction;
    },
    sync() {
      if (!dirty) return;
      fsyncSync(fd);
      dirty = false;
    },
    close() {
      closed = true;
      if (dirty) fsyncSync(fd);
      closeSync(fd);
    },
  };
}

/** The file form of events: one JSON line each. */
function linesOf(events: readonly JournaledEvent[]): string {
  return events.map((event) => `${JSON.stringify(event)}\n`).join("");
}
