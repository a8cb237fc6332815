// Reads a recording directory: its files in time order, each inflated and split into parsed lines on a worker, every damaged line named.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { openInflater, type Inflater } from "./inflater.js";
import {
  checkRecordJson,
  parseRecordLine,
  RECORDING_FILE_PATTERN,
  type ParsedLine,
  type RecordLine,
} from "../record/format.js";

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
 * The lines of `paths` (named `names` in what is reported), inflated, split and parsed as JSON on a worker thread
 * while the caller replays (inflater.ts); checked against the format here. A file cut short (the daemon killed) yields what it holds, then the problem.
 */
function* readFiles(paths: readonly string[], names: readonly string[]): Generator<RecordingItem> {
  const inflater = openInflater(paths);
  try {
    for (const name of names) yield* fileLines(inflater, name);
  } finally {
    inflater.close();
  }
}

/** The lines of the inflater's current file, up to its end piece (each batch already split and parsed as JSON). */
function* fileLines(inflater: Inflater, name: string): Generator<RecordingItem> {
  let lineNo = 0;
  for (;;) {
    const piece = inflater.next();
    if (piece.kind === "end") {
      if (piece.truncated) {
        lineNo += 1;
        const reason = "truncated line (no newline at the end of the file)";
        yield { kind: "problem", reason, at: { file: name, line: lineNo } };
      }
      if (piece.damage !== null)
        yield { kind: "problem", reason: piece.damage, at: { file: name, line: lineNo + 1 } };
      return;
    }
    const { rows, values, raw, shapes } = piece;
    let valueAt = 0;
    let rawAt = 0;
    for (const row of rows) {
      lineNo += 1;
      let parsed: ParsedLine;
      if (row < 0) parsed = parseRecordLine(raw[rawAt++]!);
      else {
        // the object JSON.parse gave on the worker, rebuilt in its key order (flat: no nested value to rebuild)
        const json: Record<string, unknown> = {};
        for (const key of shapes[row]!) json[key] = values[valueAt++];
        parsed = checkRecordJson(json);
      }
      const at = { file: name, line: lineNo };
      yield parsed.ok
        ? { kind: "line", line: parsed.line, at }
        : { kind: "problem", reason: parsed.reason, at };
    }
  }
}
