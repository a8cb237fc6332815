// The on-disk journal survives torn writes and corruption, and compaction keeps seq continuity.
import { appendFileSync, existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JournaledEvent } from "../../src/domain/events.js";
import { loadJournalFile, openJournalFile } from "../../src/state/journal-file.js";
import { readJsonFile, writeFileAtomic } from "../../src/state/atomic-file.js";

const lifecycle = (seq: number): JournaledEvent => ({
  type: "lifecycle",
  seq,
  event: "started",
  at: "2026-11-22T10:00:00.000Z",
  version: "0.1.0",
});
const tempDir = () => mkdtempSync(join(tmpdir(), "pm-state-"));

describe("journal file", () => {
  it("round-trips appended events and reports the last seq", () => {
    const path = join(tempDir(), "journal.jsonl");
    const file = openJournalFile(path);
    for (const seq of [1, 2, 3]) file.append(lifecycle(seq));
    file.close();
    const loaded = loadJournalFile(path, 0);
    expect(loaded.events.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(loaded.lastSeq).toBe(3);
    expect(loaded.skippedLines).toBe(0);
  });

  it("skips a line torn by a crash mid-write and keeps the rest", () => {
    const path = join(tempDir(), "journal.jsonl");
    const file = openJournalFile(path);
    file.append(lifecycle(1));
    file.append(lifecycle(2));
    file.close();
    appendFileSync(path, '{"type":"lifecycle","seq":3,"eve');
    const loaded = loadJournalFile(path, 0);
    expect(loaded.events.map((e) => e.seq)).toEqual([1, 2]);
    expect(loaded.skippedLines).toBe(1);
  });

  it("ignores lines that are JSON but not events, or out of order", () => {
    const path = join(tempDir(), "journal.jsonl");
    writeFileSync(
      path,
      [JSON.stringify(lifecycle(5)), "[]", '{"type":"alert","seq":"x"}', JSON.stringify(lifecycle(4))].join(
        "\n",
      ),
    );
    const loaded = loadJournalFile(path, 0);
    expect(loaded.events.map((e) => e.seq)).toEqual([5]);
    expect(loaded.skippedLines).toBe(3);
  });

  it("skips an event whose body is missing or wrong, which a restart would otherwise replay and crash on", () => {
    const path = join(tempDir(), "journal.jsonl");
    const alert = {
      fingerprint: "0123456789abcdef",
      status: "firing",
      rule: "low_sources",
      severity: "warning",
      labels: { pair: "BTC/USD" },
      summary: "BTC/USD has 1 source",
      value: 1,
      threshold: 2,
      startsAt: "2026-11-22T10:00:00.000Z",
      endsAt: null,
      reason: "first",
      context: {},
    };
    writeFileSync(
      path,
      [
        JSON.stringify(lifecycle(1)),
        '{"type":"alert","seq":2}',
        JSON.stringify({ type: "alert", seq: 3, alert: { ...alert, severity: "fatal" } }),
        JSON.stringify({ type: "lifecycle", seq: 4 }),
        JSON.stringify({ type: "alert", seq: 5, alert }),
      ].join("\n"),
    );
    const loaded = loadJournalFile(path, 0);
    expect(loaded.events.map((e) => e.seq)).toEqual([1, 5]);
    expect(loaded.events[0]).toEqual(lifecycle(1));
    expect(loaded.skippedLines).toBe(3);
  });

  it("compaction rewrites the tail atomically and appends continue after it", () => {
    const path = join(tempDir(), "journal.jsonl");
    const file = openJournalFile(path);
    for (let seq = 1; seq <= 10; seq++) file.append(lifecycle(seq));
    expect(file.linesSinceCompaction).toBe(10);
    file.compact([lifecycle(9), lifecycle(10)]);
    file.append(lifecycle(11));
    file.close();
    expect(loadJournalFile(path, 0).events.map((e) => e.seq)).toEqual([9, 10, 11]);
  });

  it("background compaction keeps every event appended while it writes, and appends go on after it", async () => {
    const dir = tempDir();
    const path = join(dir, "journal.jsonl");
    const file = openJournalFile(path);
    const ring: JournaledEvent[] = [];
    const append = (seq: number): void => {
      ring.push(lifecycle(seq));
      if (ring.length > 4) ring.shift(); // a ring of 4, like the in-memory journal
      file.append(lifecycle(seq));
    };
    for (let seq = 1; seq <= 10; seq++) append(seq);
    const compaction = file.compactInBackground([...ring]); // snapshot: 7..10
    expect(file.compactInBackground([])).toBe(compaction); // one at a time
    append(11); // lands in the old file while the new one is written
    append(12);
    expect(loadJournalFile(path, 0).events.map((e) => e.seq)).toHaveLength(12); // not rewritten synchronously
    expect(await compaction).toBe(true);
    append(13);
    expect(file.linesSinceCompaction).toBe(3); // 11 and 12 copied over, 13 appended
    file.close();
    expect(loadJournalFile(path, 0).events.map((e) => e.seq)).toEqual([7, 8, 9, 10, 11, 12, 13]);
    expect(readdirSync(dir)).toEqual(["journal.jsonl"]);
  });

  it("a background compaction that finds the file closed gives up and leaves the file alone", async () => {
    const dir = tempDir();
    const path = join(dir, "journal.jsonl");
    const file = openJournalFile(path);
    for (let seq = 1; seq <= 5; seq++) file.append(lifecycle(seq));
    const compaction = file.compactInBackground([lifecycle(5)]);
    file.close();
    expect(await compaction).toBe(false);
    expect(loadJournalFile(path, 0).events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(readdirSync(dir)).toEqual(["journal.jsonl"]);
  });
});

describe("atomic JSON files", () => {
  it("writes atomically and reads back", () => {
    const path = join(tempDir(), "state.json");
    writeFileAtomic(path, JSON.stringify({ a: 1 }));
    expect(readJsonFile(path, 0)).toEqual({ kind: "ok", value: { a: 1 } });
  });

  it("quarantines a corrupt file and reports why", () => {
    const dir = tempDir();
    const path = join(dir, "state.json");
    writeFileSync(path, "{not json");
    const read = readJsonFile(path, Date.UTC(2026, 10, 22));
    expect(read.kind).toBe("corrupt");
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(dir).some((name) => name.startsWith("state.json.corrupt-"))).toBe(true);
  });

  it("reports a missing file as missing", () => {
    expect(readJsonFile(join(tempDir(), "nope.json"), 0)).toEqual({ kind: "missing" });
  });
});
