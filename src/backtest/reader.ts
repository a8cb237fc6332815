// Reads a recording directory: its files in time order, each inflated as a stream and split into parsed lines, every damaged line named.
import { isAscii } from "node:buffer";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { openInflater, type Inflater } from "./inflater.js";
import { parseRecordLine, RECORDING_FILE_PATTERN, type RecordLine } from "../record/format.js";

/** Where a line came from: its file (name within the recording) and its 1-based line number. */
export interface LineOrigin {
  readonly file: string;
  readonly line: number;
}

/** One item of a recording: a parsed line, or a problem with its place. */
export type RecordingItem =
  | { readonly kind: "line"; readonly line: RecordLine; readonly at: LineOrigin }
  | { readonly kind: "problem"; readonly reason: string; readonly at: LineOrigin };

/** The recording files of `dir`, oldest first; throws a readable Error when the directory cannot be listed. */
export function recordingFiles(dir: string): readonly string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unknown";
    throw new Error(`recording directory ${dir} cannot be read (${code})`);
  }
  return names.filter((name) => RECORDING_FILE_PATTERN.test(name)).sort();
}

/** Every line of every file of the recording in `dir`, in order; damage is reported in place and reading goes on. */
export function* readRecording(dir: string): Generator<RecordingItem> {
  const files = recordingFiles(dir);
  yield* readFiles(
    files.map((file) => join(dir, file)),
    files,
  );
}

/** The lines of one file (see readFiles). */
export function* readRecordingFile(path: string, name: string): Generator<RecordingItem> {
  yield* readFiles([path], [name]);
}

/**
 * The lines of `paths` (named `names` in what is reported), inflated on a worker thread while the caller replays
 * (inflater.ts). A file cut short (the daemon killed) yields what it holds, then the problem.
 */
function* readFiles(paths: readonly string[], names: readonly string[]): Generator<RecordingItem> {
  const inflater = openInflater(paths);
  try {
    for (const name of names) yield* fileLines(inflater, name);
  } finally {
    inflater.close();
  }
}

/**
 * A batch as text, decoded at once (it ends at a newline byte, never inside a UTF-8 character); plain ASCII, as
 * recordings mostly are, is copied as Latin-1, several times faster than decoding UTF-8 (the profile's top item).
 */
function batchText(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return isAscii(buffer) ? buffer.toString("latin1") : buffer.toString("utf8");
}

/** The lines of the inflater's current file, up to its end piece. */
function* fileLines(inflater: Inflater, name: string): Generator<RecordingItem> {
  let lineNo = 0;
  let cut = false;
  for (;;) {
    const piece = inflater.next();
    if (piece.kind === "end") {
      if (piece.damage !== null)
        yield { kind: "problem", reason: piece.damage, at: { file: name, line: lineNo + 1 } };
      return;
    }
    const text = batchText(piece.bytes);
    let start = 0;
    while (!cut && start < text.length) {
      const end = text.indexOf("\n", start);
      lineNo += 1;
      const at = { file: name, line: lineNo };
      if (end < 0) {
        cut = true;
        yield { kind: "problem", reason: "truncated line (no newline at the end of the file)", at };
        break;
      }
      const parsed = parseRecordLine(text.slice(start, end));
      start = end + 1;
      yield parsed.ok
        ? { kind: "line", line: parsed.line, at }
        : { kind: "problem", reason: parsed.reason, at };
    }
  }
}
