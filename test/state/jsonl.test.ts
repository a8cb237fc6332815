// The one JSON-lines reader: a torn last line is always skipped, other damage follows the policy, one quarantine name.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { quarantinePath } from "../../src/state/atomic-file.js";
import { readJsonlFile, type JsonlDamagePolicy } from "../../src/state/jsonl.js";

/** Numbers are records; anything else that parses is a damaged line. */
const asNumber = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined);
const NOW_MS = Date.UTC(2026, 10, 22, 10, 0, 0, 123);

function fileWith(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "pm-jsonl-")), "f.jsonl");
  writeFileSync(path, text);
  return path;
}

const cases: readonly {
  readonly name: string;
  readonly text: string;
  readonly badLine: JsonlDamagePolicy["badLine"];
  readonly records: readonly number[];
  readonly skippedLines: number;
  readonly quarantined: boolean;
}[] = [
  {
    name: "clean",
    text: "1\n2\n",
    badLine: "quarantine",
    records: [1, 2],
    skippedLines: 0,
    quarantined: false,
  },
  {
    name: "blank lines",
    text: "1\n\n  \n2",
    badLine: "quarantine",
    records: [1, 2],
    skippedLines: 0,
    quarantined: false,
  },
  {
    name: "torn tail, skip",
    text: '1\n2\n{"x',
    badLine: "skip",
    records: [1, 2],
    skippedLines: 1,
    quarantined: false,
  },
  {
    name: "torn tail, quarantine",
    text: '1\n2\n{"x',
    badLine: "quarantine",
    records: [1, 2],
    skippedLines: 1,
    quarantined: false,
  },
  {
    name: "bad last line ending in \\n",
    text: '1\n"s"\n',
    badLine: "quarantine",
    records: [1],
    skippedLines: 1,
    quarantined: false,
  },
  {
    name: "bad middle line, skip",
    text: '1\n{\n2\n"s"\n3\n',
    badLine: "skip",
    records: [1, 2, 3],
    skippedLines: 2,
    quarantined: false,
  },
  {
    name: "bad middle line, quarantine",
    text: "1\ngarbage\n2\n",
    badLine: "quarantine",
    records: [],
    skippedLines: 0,
    quarantined: true,
  },
];

describe("readJsonlFile", () => {
  it.each(cases)("$name", ({ text, badLine, records, skippedLines, quarantined }) => {
    const path = fileWith(text);
    const read = readJsonlFile(path, asNumber, { badLine }, NOW_MS);
    expect(read.records).toEqual(records);
    expect(read.skippedLines).toBe(skippedLines);
    expect(read.existed).toBe(!quarantined);
    expect(read.quarantined?.movedTo ?? null).toBe(quarantined ? quarantinePath(path, NOW_MS) : null);
    expect(existsSync(path)).toBe(!quarantined);
  });

  it("names the damaged line when it quarantines", () => {
    const read = readJsonlFile(fileWith("1\nx\n2\n"), asNumber, { badLine: "quarantine" }, NOW_MS);
    expect(read.quarantined?.reason).toBe("damaged line 2");
  });

  it("reads a missing file as empty, not existing", () => {
    const path = join(mkdtempSync(join(tmpdir(), "pm-jsonl-")), "absent.jsonl");
    expect(readJsonlFile(path, asNumber, { badLine: "skip" }, NOW_MS)).toEqual({
      existed: false,
      records: [],
      skippedLines: 0,
      quarantined: null,
    });
  });

  it("quarantines a file it cannot read, whatever the policy", () => {
    const dir = mkdtempSync(join(tmpdir(), "pm-jsonl-"));
    const path = join(dir, "f.jsonl");
    mkdirSync(path); // a directory where the file should be: EISDIR
    const read = readJsonlFile(path, asNumber, { badLine: "skip" }, NOW_MS);
    expect(read.quarantined).toEqual({
      movedTo: quarantinePath(path, NOW_MS),
      reason: "unreadable (EISDIR)",
    });
    expect(readdirSync(dir)).toEqual(["f.jsonl.corrupt-2026-11-22T10-00-00-123Z"]);
  });
});
