// Reads a recording directory: its files in time order, each gunzipped and split into parsed lines, every damaged line named.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { constants as zlibConstants, gunzipSync } from "node:zlib";
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
  for (const file of recordingFiles(dir)) yield* readRecordingFile(join(dir, file), file);
}

/** Byte value of the line separator; it never occurs inside a multi-byte UTF-8 character. */
const NEWLINE_BYTE = 0x0a;

/**
 * The lines of one file; a file cut short (the daemon killed) yields what it holds, then the problem. Lines are
 * split on the inflated bytes and decoded one by one: a part may hold up to 4 GiB (recording.maxFileBytes), more
 * than one JavaScript string can (~512 MiB).
 */
export function* readRecordingFile(path: string, name: string): Generator<RecordingItem> {
  const { bytes, damage } = gunzipFile(path);
  let start = 0;
  let lineNo = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf(NEWLINE_BYTE, start);
    lineNo += 1;
    const at = { file: name, line: lineNo };
    if (end < 0) {
      yield { kind: "problem", reason: "truncated line (no newline at the end of the file)", at };
      break;
    }
    const parsed = parseRecordLine(bytes.toString("utf8", start, end));
    start = end + 1;
    yield parsed.ok
      ? { kind: "line", line: parsed.line, at }
      : { kind: "problem", reason: parsed.reason, at };
  }
  if (damage !== null) yield { kind: "problem", reason: damage, at: { file: name, line: lineNo + 1 } };
}

/** The file's inflated bytes; a truncated or corrupt gzip stream gives what can be decompressed, and says why it stops. */
function gunzipFile(path: string): { readonly bytes: Buffer; readonly damage: string | null } {
  let buffer: Buffer;
  try {
    buffer = readFileSync(path);
  } catch (error) {
    return {
      bytes: Buffer.alloc(0),
      damage: `unreadable (${(error as NodeJS.ErrnoException).code ?? "unknown"})`,
    };
  }
  try {
    return { bytes: gunzipSync(buffer), damage: null };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    try {
      // what was flushed before the damage still decompresses
      const partial = gunzipSync(buffer, { finishFlush: zlibConstants.Z_SYNC_FLUSH });
      return { bytes: partial, damage: `compressed stream damaged: ${reason}` };
    } catch {
      return { bytes: Buffer.alloc(0), damage: `not a gzip file: ${reason}` };
    }
  }
}
