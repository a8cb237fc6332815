// Writes recording lines as gzip-compressed JSONL files, rotated by size, behind a bounded buffer; never throws to its caller.
import { createWriteStream, mkdirSync, readdirSync, rmSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import { constants as zlibConstants, createGzip, type Gzip } from "node:zlib";
import type { Logger } from "pino";
import { VERSION } from "../version.js";
import {
  RECORDING_FILE_PATTERN,
  RECORDING_FORMAT_VERSION,
  recordingFileName,
  type RecordLine,
} from "./format.js";

/** How often compressed data is flushed to the file. */
const FLUSH_INTERVAL_MS = 1_000;

/** Where and how much to write. */
export interface RecordingWriterOptions {
  readonly dir: string;
  /** A file is closed and the next one opened once this many (uncompressed) bytes went into it. */
  readonly maxFileBytes: number;
  /** Oldest files are deleted beyond this many; 0 keeps them all. */
  readonly maxFiles: number;
  /** Lines waiting to be compressed are bounded by this many bytes; past it, new lines are dropped and counted. */
  readonly maxBufferedBytes: number;
  readonly nowMs: () => number;
  readonly logger: Logger;
  /** Told of every line's fate (the `pm_recording_lines_total` metric). */
  readonly onLine?: (outcome: "written" | "dropped" | "error") => void;
}

/** The writer's counters, for the CLI's summary and tests. */
export interface RecordingStats {
  readonly written: number;
  readonly dropped: number;
  readonly errors: number;
  readonly files: number;
}

/** A running recording. */
export interface RecordingWriter {
  /** Queue one line; never throws, never blocks (a full buffer drops the line). */
  write(line: RecordLine): void;
  /** Resolves once everything queued so far is compressed and flushed to disk. */
  flush(): Promise<void>;
  /** Flush and close the current file; later writes are dropped. */
  close(): Promise<void>;
  stats(): RecordingStats;
}

/** The file being written. */
interface OpenFile {
  readonly gzip: Gzip;
  readonly out: WriteStream;
  bytes: number;
}

/** Open a recording in `dir` (created if missing); files already there are kept and counted toward maxFiles. */
export function createRecordingWriter(options: RecordingWriterOptions): RecordingWriter {
  const { logger } = options;
  const startMs = options.nowMs();
  let queue: string[] = [];
  let queuedBytes = 0;
  let part = 0;
  let file: OpenFile | null = null;
  let closed = false;
  let draining: Promise<void> = Promise.resolve();
  let droppingSinceMs: number | null = null;
  const counts = { written: 0, dropped: 0, errors: 0, files: 0 };
  const tell = (outcome: "written" | "dropped" | "error", n = 1): void => {
    for (let i = 0; i < n; i++) options.onLine?.(outcome);
  };

  try {
    mkdirSync(options.dir, { recursive: true });
  } catch (error) {
    logger.error({ err: error, dir: options.dir }, "recording directory unusable: nothing is recorded");
    closed = true;
  }

  const openNext = (): OpenFile => {
    part += 1;
    const path = join(options.dir, recordingFileName(startMs, part));
    const gzip = createGzip();
    const out = createWriteStream(path, { flags: "wx" });
    const failed = (error: unknown): void => {
      counts.errors += 1;
      tell("error");
      logger.error({ err: error, path }, "recording file write failed");
    };
    out.on("error", failed);
    gzip.on("error", failed);
    gzip.pipe(out);
    counts.files += 1;
    const opened: OpenFile = { gzip, out, bytes: 0 };
    const header: RecordLine = {
      type: "file",
      v: RECORDING_FORMAT_VERSION,
      atMs: options.nowMs(),
      part,
      version: VERSION,
    };
    writeText(opened, `${JSON.stringify(header)}\n`);
    prune(options, logger);
    return opened;
  };

  const drainOnce = async (): Promise<void> => {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      queuedBytes = 0;
      for (const text of batch) {
        if (file === null || file.bytes >= options.maxFileBytes) {
          if (file !== null) await endFile(file);
          file = openNext();
        }
        const ok = writeText(file, text);
        counts.written += 1;
        tell("written");
        if (!ok) await waitDrain(file.gzip);
      }
    }
  };

  const schedule = (): Promise<void> => {
    draining = draining.then(drainOnce).catch((error: unknown) => {
      counts.errors += 1;
      tell("error");
      logger.error({ err: error }, "recording failed to write");
    });
    return draining;
  };

  // what is written reaches the disk within a second, decodable even if the process is killed next
  const flusher = setInterval(() => {
    if (file !== null) void flushGzip(file.gzip);
  }, FLUSH_INTERVAL_MS);
  flusher.unref();

  return {
    write(line) {
      if (closed) return;
      const text = `${JSON.stringify(line)}\n`;
      if (queuedBytes + text.length > options.maxBufferedBytes) {
        counts.dropped += 1;
        tell("dropped");
        if (droppingSinceMs === null) {
          droppingSinceMs = options.nowMs();
          logger.warn({ maxBufferedBytes: options.maxBufferedBytes }, "recording buffer full: lines dropped");
        }
        return;
      }
      droppingSinceMs = null;
      const wasEmpty = queue.length === 0;
      queue.push(text);
      queuedBytes += text.length;
      if (wasEmpty) void schedule();
    },
    flush: async () => {
      await schedule();
      if (file !== null) await flushGzip(file.gzip);
    },
    async close() {
      clearInterval(flusher);
      if (closed && file === null) return;
      await schedule();
      closed = true;
      const last = file as OpenFile | null;
      file = null;
      if (last !== null) await endFile(last);
    },
    stats: () => ({ ...counts }),
  };
}

/** Write text into the file's gzip stream; false when the stream wants a drain first. */
function writeText(file: OpenFile, text: string): boolean {
  file.bytes += Buffer.byteLength(text);
  return file.gzip.write(text);
}

/** Wait for a stream's `drain` (or its error, which its own handler reports). */
function waitDrain(gzip: Gzip): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      gzip.off("drain", done);
      gzip.off("error", done);
      resolve();
    };
    gzip.once("drain", done);
    gzip.once("error", done);
  });
}

/** A sync flush: everything written so far can be decompressed from the file, even if the process dies next. */
function flushGzip(gzip: Gzip): Promise<void> {
  if (gzip.destroyed) return Promise.resolve();
  return new Promise((resolve) => gzip.flush(zlibConstants.Z_SYNC_FLUSH, () => resolve()));
}

/** Finish a file: the gzip trailer written and the descriptor closed. */
function endFile(file: OpenFile): Promise<void> {
  return new Promise((resolve) => {
    file.out.once("close", () => resolve());
    file.out.once("error", () => resolve());
    if (file.gzip.destroyed) file.out.destroy();
    else file.gzip.end();
  });
}

/** Delete the oldest recording files beyond maxFiles (the file just opened is the newest). */
function prune(options: RecordingWriterOptions, logger: Logger): void {
  if (options.maxFiles <= 0) return;
  try {
    const names = readdirSync(options.dir)
      .filter((name) => RECORDING_FILE_PATTERN.test(name))
      .sort();
    for (const name of names.slice(0, Math.max(0, names.length - options.maxFiles))) {
      rmSync(join(options.dir, name), { force: true });
      logger.info({ file: name }, "recording file rotated out");
    }
  } catch (error) {
    logger.warn({ err: error, dir: options.dir }, "could not prune old recording files");
  }
}
