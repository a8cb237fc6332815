// State is private: the journal, checkpoint, lock and every outbox file are 0600, the folders 0700.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AlertEvent } from "../../src/domain/events.js";
import { openOutbox } from "../../src/sinks/chatops/outbox.js";
import { isAlertEvent } from "../../src/state/event-schema.js";
import { openStateStore } from "../../src/state/state-store.js";
import { makeEvent, nthAlert } from "../sinks/chatops/helpers.js";

const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8);

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "pm-perm-"));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function openSinkOutbox(dir: string) {
  return openOutbox<AlertEvent>({
    dir,
    name: "slack",
    maxEntries: 100,
    isPayload: isAlertEvent,
    seqOf: (event) => event.seq,
    startHighWater: 0,
    logger: pino({ level: "silent" }),
    nowMs: () => 1_000,
    onDurable: () => undefined,
    onDeadLetter: () => undefined,
  });
}

describe("state file permissions", () => {
  it("creates the state folder 0700 and the journal and checkpoint 0600", () => {
    const dir = join(root, "state");
    const store = openStateStore({
      dir,
      journalCapacity: 100,
      nowMs: () => 1_000,
      logger: pino({ level: "silent" }),
      process: { pid: process.pid, isAlive: () => false },
    });
    store.saveCheckpoint({ lastSeq: 0, engine: { version: 1, alerts: [] } });
    expect(modeOf(dir)).toBe("700");
    expect(modeOf(join(dir, "journal.jsonl"))).toBe("600");
    expect(modeOf(join(dir, "alerts.json"))).toBe("600");
    store.close();
  });

  it("creates outbox folders 0700 and outbox, compacted and dead-letter files 0600", async () => {
    const dir = join(root, "state", "outbox");
    const outbox = await openSinkOutbox(dir);
    outbox.append(makeEvent(1, nthAlert(1)), 10);
    await outbox.flush();
    await outbox.deadLetter(outbox.entries(), "rejected", 20);
    await outbox.close();
    expect(modeOf(join(root, "state"))).toBe("700");
    expect(modeOf(dir)).toBe("700");
    expect(modeOf(join(dir, "slack.jsonl"))).toBe("600");
    expect(modeOf(join(dir, "slack.dead.jsonl"))).toBe("600");
  });

  it("tightens an outbox folder and files an older version left 0755/0644", async () => {
    const dir = join(root, "outbox");
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    for (const file of ["slack.jsonl", "slack.dead.jsonl"]) {
      writeFileSync(join(dir, file), "", { mode: 0o644 });
      chmodSync(join(dir, file), 0o644);
    }
    const outbox = await openSinkOutbox(dir);
    await outbox.close();
    expect(modeOf(dir)).toBe("700");
    expect(modeOf(join(dir, "slack.jsonl"))).toBe("600");
    expect(modeOf(join(dir, "slack.dead.jsonl"))).toBe("600");
  });
});
