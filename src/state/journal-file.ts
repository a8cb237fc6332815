// The journal on disk: one JSON line per journaled event, written before the event is emitted, compacted atomically.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { JournaledEvent } from "../domain/events.js";
import {
  ensurePrivateDir,
  PRIVATE_FILE_MODE,
  quarantine,
  tightenFile,
  writeFileAtomic,
} from "./atomic-file.js";

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
  /** Rewrite the file with just `events` (atomic), e.g. the in-memory ring's tail. */
  compact(events: readonly JournaledEvent[]): void;
  /** Lines appended since the last compaction. */
  readonly linesSinceCompaction: number;
  /** fsync pending appends (called periodically and at shutdown; kill -9 alone loses nothing already written). */
  sync(): void;
  close(): void;
}

/** True when `value` looks like a journaled event (enough to keep seq and replay intact). */
function isJournaledEvent(value: unknown): value is JournaledEvent {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as { type?: unknown; seq?: unknown };
  return (
    (candidate.type === "alert" || candidate.type === "lifecycle") &&
    typeof candidate.seq === "number" &&
    Number.isSafeInteger(candidate.seq) &&
    candidate.seq > 0
  );
}

/** Read the journal file, keeping every parseable event in seq order and skipping damaged lines. */
export function loadJournalFile(path: string, nowMs: number): LoadedJournal {
  if (!existsSync(path)) return { events: [], lastSeq: 0, skippedLines: 0, quarantinedTo: null };
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return { events: [], lastSeq: 0, skippedLines: 0, quarantinedTo: quarantine(path, nowMs) };
  }
  const events: JournaledEvent[] = [];
  let skippedLines = 0;
  let lastSeq = 0;
  for (const line of text.split("\n")) {
    if (line.length === 0) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      skippedLines++;
      continue;
    }
    if (!isJournaledEvent(parsed) || parsed.seq <= lastSeq) {
      skippedLines++;
      continue;
    }
    events.push(parsed);
    lastSeq = parsed.seq;
  }
  return { events, lastSeq, skippedLines, quarantinedTo: null };
}

/** Open the journal file for appending (created if missing). */
export function openJournalFile(path: string): JournalFile {
  ensurePrivateDir(dirname(path), false);
  tightenFile(path);
  let fd = openSync(path, "a", PRIVATE_FILE_MODE);
  let linesSinceCompaction = 0;
  let dirty = false;
  return {
    append(event) {
      writeSync(fd, `${JSON.stringify(event)}\n`);
      linesSinceCompaction++;
      dirty = true;
    },
    compact(events) {
      writeFileAtomic(path, events.map((event) => `${JSON.stringify(event)}\n`).join(""));
      closeSync(fd);
      fd = openSync(path, "a", PRIVATE_FILE_MODE);
      linesSinceCompaction = 0;
      dirty = false;
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
      if (dirty) fsyncSync(fd);
      closeSync(fd);
    },
  };
}
