// Reads a recording directory: its files in time order, each inflated and split into parsed lines on a worker, every damaged line named.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { openInflater, type InflatedPiece } from "./inflater.js";
import {
  flatLineCheck,
  parseRecordLine,
  type FlatLineCheck,
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
export function readRecording(dir: string): Generator<RecordingItem> {
  // listed on the first item, as a generator's body would be
  return readFiles(() => {
    const files = recordingFiles(dir);
    return { paths: files.map((file) => join(dir, file)), names: files };
  });
}

/** The lines of one file (see readFiles). */
export function readRecordingFile(path: string, name: string): Generator<RecordingItem> {
  return readFiles(() => ({ paths: [path], names: [name] }));
}

/**
 * The lines of the files `list` gives (named `names` in what is reported), inflated, split and parsed as JSON on a
 * worker thread while the caller replays (inflater.ts); checked against the format here. A file cut short (the
 * daemon killed) yields what it holds, then the problem. One generator for the whole read: an item costs one resume.
 */
function* readFiles(
  list: () => { readonly paths: readonly string[]; readonly names: readonly string[] },
): Generator<RecordingItem> {
  const { paths, names } = list();
  const inflater = openInflater(paths);
  // one check per shape of flat line, in the inflater's shape order
  const checks: FlatLineCheck[] = [];
  try {
    for (const name of names) {
      let lineNo = 0;
      let piece = inflater.next();
      for (; piece.kind === "lines"; piece = inflater.next()) {
        const { rows, values, raw, shapes } = piece;
        for (let shape = checks.length; shape < shapes.length; shape++)
          checks.push(flatLineCheck(shapes[shape]!));
        let valueAt = 0;
        let rawAt = 0;
        for (let r = 0; r < rows.length; r++) {
          const row = rows[r]!;
          lineNo += 1;
          let parsed: ParsedLine;
          if (row < 0) parsed = parseRecordLine(raw[rawAt++]!);
          else {
            // the object JSON.parse gave on the worker, rebuilt in its key order (flat: no nested value to rebuild)
            parsed = checks[row]!(values, valueAt);
            valueAt += shapes[row]!.length;
          }
          const at = { file: name, line: lineNo };
          yield parsed.ok
            ? { kind: "line", line: parsed.line, at }
            : { kind: "problem", reason: parsed.reason, at };
        }
      }
      yield* endProblems(piece, name, lineNo);
    }
  } finally {
    inflater.close();
  }
}

/** The problems a file's end piece names: its last line cut short, then the damage that stopped it. */
function endProblems(
  end: Extract<InflatedPiece, { kind: "end" }>,
  name: string,
  linesRead: number,
): RecordingItem[] {
  const problems: RecordingItem[] = [];
  let lineNo = linesRead;
  if (end.truncated) {
    lineNo += 1;
    const reason = "truncated line (no newline at the end of the file)";
    problems.push({ kind: "problem", reason, at: { file: name, line: lineNo } });
  }
  if (end.damage !== null)
    problems.push({ kind: "problem", reason: end.damage, at: { file: name, line: lineNo + 1 } });
  return problems;
}
