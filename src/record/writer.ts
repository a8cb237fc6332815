// Writes recording lines as gzip-compressed JSONL files, rotated by size, behind a bounded buffer; never throws to its caller.
import { createWriteStream, mkdirSync, readdirSync, rmSync, type WriteStream } from "node:fs";
import { basename, join } from "node:path";
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
  const writer = new FileWriter(options);
  return {
    write: (line) => writer.write(line),
    flush: () => writer.flush(),
    close: () => writer.close(),
    stats: () => ({ ...writer.counts }),
  };
}

/** The writer's state: the queue, the open file, the drain chain and the counters. */
class FileWriter {
  readonly counts = { written: 0, dropped: 0, errors: 0, files: 0 };
  private readonly startMs: number;
  private queue: string[] = [];
  private queuedBytes = 0;
  private part = 0;
  private file: OpenFile | null = null;
  private closed = false;
  private draining: Promise<void> = Promise.resolve();
  private dropping = false;
  private readonly flusher: NodeJS.Timeout;

  constructor(private readonly options: RecordingWriterOptions) {
    this.startMs = options.nowMs();
    try {
      mkdirSync(options.dir, { recursive: true });
    } catch (error) {
      options.logger.error(
        { err: error, dir: options.dir },
        "recording directory unusable: nothing is recorded",
      );
      this.closed = true;
    }
    // what is written reaches the disk within a second, decodable even if the process is killed next
    this.flusher = setInterval(() => {
      if (this.file !== null) void flushGzip(this.file.gzip);
    }, FLUSH_INTERVAL_MS);
    this.flusher.unref();
  }

  /** Queue one line, or drop it when the buffer is full. */
  write(line: RecordLine): void {
    if (this.closed) return;
    const text = `${JSON.stringify(line)}\n`;
    if (this.queuedBytes + text.length > this.options.maxBufferedBytes) {
      this.count("dropped");
      if (!this.dropping) {
        this.dropping = true;
        const { maxBufferedBytes } = this.options;
        this.options.logger.warn({ maxBufferedBytes }, "recording buffer full: lines dropped");
      }
      return;
    }
    this.dropping = false;
    const wasEmpty = this.queue.length === 0;
    this.queue.push(text);
    this.queuedBytes += text.length;
    if (wasEmpty) void this.schedule();
  }

  async flush(): Promise<void> {
    await this.schedule();
    const { file } = this;
    if (file === null) return;
    await flushGzip(file.gzip);
    // the flushed bytes were piped into the file stream: wait until it has handed them to the file
    await new Promise<void>((resolve) => file.out.write("", () => resolve()));
  }

  async close(): Promise<void> {
    clearInterval(this.flusher);
    await this.schedule();
    this.closed = true;
    const last = this.file;
    this.file = null;
    if (last !== null) await endFile(last);
  }

  private count(outcome: "written" | "dropped" | "error"): void {
    this.counts[outcome === "error" ? "errors" : outcome] += 1;
    this.options.onLine?.(outcome);
  }

  /** Drain the queue after whatever drain is under way. */
  private schedule(): Promise<void> {
    this.draining = this.draining
      .then(() => this.drain())
      .catch((error: unknown) => {
        this.count("error");
        this.options.logger.error({ err: error }, "recording failed to write");
      });
    return this.draining;
  }

  /** Compress what is queued, rotating files by size and honouring backpressure. */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      this.queuedBytes = 0;
      for (const text of batch) {
        let file = this.file;
        if (file === null || file.bytes >= this.options.maxFileBytes) {
          if (file !== null) await endFile(file);
          file = this.openNext();
          this.file = file;
        }
        const ok = writeText(file, text);
        this.count("written");
        if (!ok) await waitDrain(file.gzip);
      }
    }
  }

  /** Open the next part, write its header line, prune old parts. */
  private openNext(): OpenFile {
    const { options } = this;
    this.part += 1;
    const path = join(options.dir, recordingFileName(this.startMs, this.part));
    const gzip = createGzip();
    const out = createWriteStream(path, { flags: "wx" });
    const failed = (error: unknown): void => {
      this.count("error");
      options.logger.error({ err: error, path }, "recording file write failed");
    };
    out.on("error", failed);
    gzip.on("error", failed);
    gzip.pipe(out);
    this.counts.files += 1;
    const opened: OpenFile = { gzip, out, bytes: 0 };
    const header: RecordLine = {
      type: "file",
      v: RECORDING_FORMAT_VERSION,
      atMs: options.nowMs(),
      part: this.part,
      version: VERSION,
    };
    writeText(opened, `${JSON.stringify(header)}\n`);
    prune(options, options.logger, basename(path));
    return opened;
  }
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

/** Delete the oldest recording files beyond maxFiles, counting `current` (just opened, maybe not listed yet). */
function prune(options: RecordingWriterOptions, logger: Logger, current: string): void {
  if (options.maxFiles <= 0) return;
  try {
    const names = readdirSync(options.dir)
      .filter((name) => RECORDING_FILE_PATTERN.test(name) && name !== current)
      .sort();
    for (const name of names.slice(0, Math.max(0, names.length - (options.maxFiles - 1)))) {
      rmSync(join(options.dir, name), { force: true });
      logger.info({ file: name }, "recording file rotated out");
    }
  } catch (error) {
    logger.warn({ err: error, dir: options.dir }, "could not prune old recording files");
  }
}
