// The one reader of JSON-lines state files (journal, outboxes): a per-line decoder and an explicit damage policy.
import { existsSync, readFileSync } from "node:fs";
import { errorCode } from "../domain/errors.js";
import { quarantine } from "./atomic-file.js";

/**
 * What a damaged line costs. A bad *last* line is a write cut short by kill -9 and is always skipped; `badLine`
 * decides for a bad line anywhere else: "skip" keeps every other line (the journal: each line stands alone),
 * "quarantine" moves the whole file aside and reads nothing (the outbox: a line may be a tombstone of another).
 */
export interface JsonlDamagePolicy {
  readonly badLine: "skip" | "quarantine";
}

/** Decode one parsed line into a record; undefined marks the line as damaged. */
export type JsonlDecoder<T> = (value: unknown) => T | undefined;

/** What a JSON-lines file held. */
export interface JsonlRead<T> {
  /** False for a missing file, or one moved aside (the reader then starts fresh). */
  readonly existed: boolean;
  /** The decoded lines, in file order. */
  readonly records: readonly T[];
  /** Damaged lines skipped (the torn last line included). */
  readonly skippedLines: number;
  /** Set when the file was moved aside: where to, and why. */
  readonly quarantined: { readonly movedTo: string; readonly reason: string } | null;
}

/**
 * Read `path` line by line through `decode`. Synchronous: state files are read once, at open. A file that
 * cannot be read is quarantined whatever the policy.
 */
export function readJsonlFile<T>(
  path: string,
  decode: JsonlDecoder<T>,
  policy: JsonlDamagePolicy,
  nowMs: number,
): JsonlRead<T> {
  if (!existsSync(path)) return { existed: false, records: [], skippedLines: 0, quarantined: null };
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    return movedAside(path, `unreadable (${errorCode(error) ?? "unknown"})`, nowMs);
  }
  const lines = text.split("\n");
  // a file that ends without "\n" was cut mid-append: its final element is that partial line
  const tailIndex = lines.at(-1) === "" ? lines.length - 2 : lines.length - 1;
  const records: T[] = [];
  let skippedLines = 0;
  for (const [index, line] of lines.entries()) {
    if (line.trim() === "") continue;
    const record = decodeLine(line, decode);
    if (record !== undefined) records.push(record);
    else if (index === tailIndex || policy.badLine === "skip") skippedLines++;
    else return movedAside(path, `damaged line ${index + 1}`, nowMs);
  }
  return { existed: true, records, skippedLines, quarantined: null };
}

function decodeLine<T>(line: string, decode: JsonlDecoder<T>): T | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  return decode(value);
}

function movedAside<T>(path: string, reason: string, nowMs: number): JsonlRead<T> {
  return {
    existed: false,
    records: [],
    skippedLines: 0,
    quarantined: { movedTo: quarantine(path, nowMs), reason },
  };
}
