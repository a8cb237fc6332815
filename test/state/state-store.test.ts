// The state store's publish path: a persisted event is one appended line; compaction happens after, never inside it.
// The periodic checkpoint is written only when what it holds changed.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { parseCheckpointJson } from "../../src/state/alert-checkpoint.js";
import { loadJournalFile } from "../../src/state/journal-file.js";
import { openStateStore } from "../../src/state/state-store.js";

const lineCount = (path: string): number => readFileSync(path, "utf8").split("\n").filter(Boolean).length;

describe("openStateStore: journal compaction", () => {
  it("never rewrites the journal inside persistEvent; the rewrite follows asynchronously and loses nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pm-store-"));
    const capacity = 5;
    const store = openStateStore({
      dir,
      journalCapacity: capacity,
      nowMs: () => 0,
      logger: pino({ level: "silent" }),
    });
    const { journal } = store.recovered;
    const path = join(dir, "journal.jsonl");
    const publish = (): void => {
      const event = journal.append({
        type: "lifecycle",
        event: "started",
        at: "2026-11-22T10:00:00.000Z",
        version: "0.1.0",
      });
      store.persistEvent(event);
    };
    for (let i = 0; i < capacity * 3; i++) publish();
    // every publish only appended: the file holds all 15 lines, no synchronous rewrite happened
    expect(lineCount(path)).toBe(capacity * 3);
    await new Promise((resolve) => setTimeout(resolve, 200)); // setImmediate, then the async write and fsync
    const compacted = loadJournalFile(path, 0);
    expect(compacted.events.map((e) => e.seq)).toEqual([11, 12, 13, 14, 15]);
    publish();
    store.close();
    expect(loadJournalFile(path, 0).events.map((e) => e.seq)).toEqual([11, 12, 13, 14, 15, 16]);
  });
});

describe("openStateStore: alert checkpoint", () => {
  it("writes a checkpoint only when its seq or alert state changed (an unchanged one keeps its file and savedAt)", () => {
    const dir = mkdtempSync(join(tmpdir(), "pm-store-"));
    let nowMs = Date.parse("2026-11-22T10:00:00.000Z");
    const store = openStateStore({
      dir,
      journalCapacity: 5,
      nowMs: () => nowMs,
      logger: pino({ level: "silent" }),
    });
    const path = join(dir, "alerts.json");
    const savedAt = (): unknown => (JSON.parse(readFileSync(path, "utf8")) as { savedAt: unknown }).savedAt;
    const empty = { version: 1 as const, alerts: [] };
    store.saveCheckpoint({ lastSeq: 3, engine: empty });
    expect(savedAt()).toBe("2026-11-22T10:00:00.000Z");
    nowMs += 5_000;
    store.saveCheckpoint({ lastSeq: 3, engine: { version: 1, alerts: [] } });
    expect(savedAt()).toBe("2026-11-22T10:00:00.000Z");
    nowMs += 5_000;
    store.saveCheckpoint({ lastSeq: 4, engine: empty });
    expect(savedAt()).toBe("2026-11-22T10:00:10.000Z");
    expect(parseCheckpointJson(readFileSync(path, "utf8")).lastSeq).toBe(4);
    store.close();
  });
});
