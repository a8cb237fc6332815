// The recording reader: files inflated as streams on a worker, lines across batch boundaries intact, damage named per file.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_SHAPES, openInflater, type InflatedPiece } from "../../src/backtest/inflater.js";
import { readRecording, type RecordingItem } from "../../src/backtest/reader.js";
import { parseRecordLine, recordingFileName, type RecordLine } from "../../src/record/format.js";
import { okPoll, tempDir } from "./helpers.js";

const T0 = Date.parse("2026-11-20T10:00:00.000Z");

/** `n` polls whose bodies are ~`bodyBytes` long and hold multi-byte characters. */
function polls(n: number, bodyBytes: number): RecordLine[] {
  const filler = "€ü".repeat(Math.ceil(bodyBytes / 5));
  return Array.from({ length: n }, (_, i) => okPoll("t", T0 + i, JSON.stringify({ i, filler }))).flat();
}

/** Write `text` gzipped as part `part` of a recording in `dir`; the file's name. */
function writePart(dir: string, part: number, bytes: Buffer): string {
  const name = recordingFileName(T0, part);
  writeFileSync(join(dir, name), bytes);
  return name;
}

const jsonl = (lines: readonly RecordLine[]): string => lines.map((l) => `${JSON.stringify(l)}\n`).join("");
const linesOf = (items: readonly RecordingItem[]): RecordLine[] =>
  items.flatMap((item) => (item.kind === "line" ? [item.line] : []));
const problemsOf = (items: readonly RecordingItem[]): string[] =>
  items.flatMap((item) =>
    item.kind === "problem" ? [`${item.at.file}:${item.at.line}: ${item.reason}`] : [],
  );

describe("readRecording", () => {
  it("reads files far larger than one batch, lines split across batches and multi-byte text intact", () => {
    const dir = tempDir();
    const first = polls(600, 3_000); // ~4 MB inflated: many 256 KiB batches, most cut mid-line
    const second = polls(10, 100);
    writePart(dir, 1, gzipSync(jsonl(first)));
    writePart(dir, 2, gzipSync(jsonl(second)));
    const items = [...readRecording(dir)];
    expect(problemsOf(items)).toEqual([]);
    expect(linesOf(items)).toEqual([...first, ...second]);
    const last = items.at(-1);
    expect(last?.at).toEqual({ file: recordingFileName(T0, 2), line: second.length });
  });

  it("names a file that is not gzip and a stream damaged mid-way, keeps what came before, and goes on", () => {
    const dir = tempDir();
    const lines = polls(400, 1_000);
    const zipped = gzipSync(jsonl(lines), { level: 1 });
    const damaged = Buffer.from(zipped);
    for (let i = Math.floor(zipped.length / 2); i < zipped.length / 2 + 64; i++) damaged[i] = 0xff;
    const notGzip = writePart(dir, 1, Buffer.from("plain text\n"));
    const broken = writePart(dir, 2, damaged);
    writePart(dir, 3, gzipSync(jsonl(polls(3, 10))));
    const items = [...readRecording(dir)];
    const problems = problemsOf(items);
    expect(problems[0]).toMatch(new RegExp(`^${notGzip}:1: not a gzip file: `));
    expect(problems.some((p) => p.startsWith(`${broken}:`) && p.includes("compressed stream damaged"))).toBe(
      true,
    );
    const read = linesOf(items);
    // the lines before the damage, then all of the next file
    expect(read.length).toBeGreaterThan(6);
    expect(read.length).toBeLessThan(lines.length + 6);
    expect(read.slice(0, 10)).toEqual(lines.slice(0, 10));
    expect(read.slice(-6)).toEqual(polls(3, 10));
  });

  it("gives every line what parseRecordLine gives it, flat JSON objects, nested ones and non-JSON interleaved", () => {
    const dir = tempDir();
    const texts = [
      ...okPoll("t", T0, '{"a":1}').map((line) => JSON.stringify(line)),
      "not json",
      '{"type":"poll","atMs":1,"target":"t","ok":true,"extra":{"nested":1}}',
      "[1,2]",
      "42",
      '{"type":"poll","atMs":2,"target":"t","ok":true,"__proto__":null}',
      '{"type":"poll","atMs":3,"target":"t","ok":"yes"}',
      '{"atMs":4,"type":"poll","ok":false,"target":"t","code":"PM_ERR_X","retryable":false}',
      "",
      ...okPoll("u", T0 + 1, "{}").map((line) => JSON.stringify(line)),
      '{"type":"start","atMs":5,"tickMs":1000,"upstream":"x","shape":"new"}',
      '{"type":"start","atMs":6,"tickMs":1000,"upstream":"€"}',
    ];
    // after ~1 MB of padding: the worker hands a batch over as text while the reader holds no other (it parses
    // faster than it waits), so the reader pauses at its first line and the worker runs ahead and parses the last
    // batches itself (the path whose objects are rebuilt here)
    const padding = polls(900, 1_000).map((line) => JSON.stringify(line));
    const all = [...padding, ...texts];
    const name = writePart(dir, 1, gzipSync(all.map((text) => `${text}\n`).join("")));
    const items: RecordingItem[] = [];
    for (const item of readRecording(dir)) {
      if (items.length === 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
      items.push(item);
    }
    expect(items).toEqual(
      all.map((text, i) => {
        const parsed = parseRecordLine(text);
        const at = { file: name, line: i + 1 };
        return parsed.ok
          ? { kind: "line", line: parsed.line, at }
          : { kind: "problem", reason: parsed.reason, at };
      }),
    );
    expect(items.filter((item) => item.kind === "problem")).toHaveLength(5);
  });

  it("gives every line what parseRecordLine gives it in batches cut mid-line, shapes alternating and of any width, and a torn last line", () => {
    // the filler makes lines cross the worker's 256 KiB batches; values from small pools, shapes interleaved
    const short = fc.constantFrom("poll", "response", "a", "b", "", "x".repeat(64), "y".repeat(65));
    const value = fc.oneof(short, fc.constantFrom(null, true, 1, 2.5), fc.string({ maxLength: 3 }));
    const filler = fc.constantFrom("", "f".repeat(2_000));
    const wide = Array.from({ length: 40 }, (_, k) => `k${k}`);
    const line = fc.oneof(
      fc
        .record({ type: short, atMs: fc.constantFrom(1, 2), target: short, ok: fc.boolean() })
        .map((l) => JSON.stringify(l)),
      fc
        .tuple(fc.constantFrom(...okPoll("t", T0, "{}")), value, filler)
        .map(([l, target, body]) => JSON.stringify({ ...l, target, body: `${body}` })),
      fc.tuple(...wide.map(() => value), filler).map((values) => {
        const json: Record<string, unknown> = {};
        wide.forEach((key, k) => (json[key] = values[k]));
        return JSON.stringify({ ...json, pad: values[40] });
      }),
      fc.constantFrom(
        "not json",
        '{"nested":{"a":1}}',
        "",
        '{"type":"poll","atMs":1,"target":"t","ok":true}',
      ),
    );
    const padding = polls(900, 1_000).map((l) => JSON.stringify(l));
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 600 }), fc.boolean(), (texts, torn) => {
        const dir = tempDir();
        const all = [...padding, ...texts];
        const tail = torn ? '{"type":"poll","atMs":1,"tar' : "";
        const name = writePart(dir, 1, gzipSync(all.map((text) => `${text}\n`).join("") + tail));
        const items: RecordingItem[] = [];
        for (const item of readRecording(dir)) {
          // the reader holds its first batch while the worker runs ahead and parses the rest (the columnar path)
          if (items.length === 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
          items.push(item);
        }
        const expected: RecordingItem[] = all.map((text, i) => {
          const parsed = parseRecordLine(text);
          const at = { file: name, line: i + 1 };
          return parsed.ok
            ? { kind: "line", line: parsed.line, at }
            : { kind: "problem", reason: parsed.reason, at };
        });
        if (torn)
          expected.push({
            kind: "problem",
            reason: "truncated line (no newline at the end of the file)",
            at: { file: name, line: all.length + 1 },
          });
        expect(items).toEqual(expected);
      }),
      { numRuns: 12 },
    );
  });

  it("stops its worker when the reader is left early, and reads again afterwards", () => {
    const dir = tempDir();
    writePart(dir, 1, gzipSync(jsonl(polls(2_000, 1_000))));
    for (let round = 0; round < 3; round++) {
      let taken = 0;
      for (const item of readRecording(dir)) {
        expect(item.kind).toBe("line");
        if (++taken === 5) break;
      }
      expect(taken).toBe(5);
    }
    expect(linesOf([...readRecording(dir)])).toHaveLength(4_000);
  });
});

describe("openInflater", () => {
  it("keeps at most MAX_SHAPES line shapes: a flat line of a new shape past them goes over as its text", async () => {
    const dir = tempDir();
    // a first batch of one shape (the worker sends its first batch as text), then a new shape per line
    const filler = Array.from({ length: 300 }, (_, i) => JSON.stringify({ i, filler: "x".repeat(1_000) }));
    const unique = Array.from({ length: MAX_SHAPES + 50 }, (_, i) => JSON.stringify({ [`k${i}`]: i }));
    const lines = [...filler, ...unique];
    writePart(dir, 1, gzipSync(lines.map((line) => `${line}\n`).join("")));
    const inflater = openInflater([join(dir, recordingFileName(T0, 1))]);
    const pieces: InflatedPiece[] = [];
    try {
      // the worker parses a batch only while the replay has batches in hand: let it run ahead first
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      for (let piece = inflater.next(); piece.kind === "lines"; piece = inflater.next()) pieces.push(piece);
    } finally {
      inflater.close();
    }
    const rows = pieces.flatMap((piece) => (piece.kind === "lines" ? [...piece.rows] : []));
    const raw = pieces.flatMap((piece) => (piece.kind === "lines" ? piece.raw : []));
    const last = pieces.at(-1);
    expect(rows).toHaveLength(lines.length);
    expect(last?.kind === "lines" ? last.shapes.length : 0).toBe(MAX_SHAPES);
    expect(rows.slice(-50).every((row) => row === -1)).toBe(true);
    expect(raw.slice(-50)).toEqual(unique.slice(-50));
  });
});
