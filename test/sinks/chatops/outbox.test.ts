// The durable outbox file: round trip, tombstones, compaction, torn tail, corrupt file, overflow.
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AlertEvent } from "../../../src/domain/events.js";
import { openOutbox, type DeadLetterReason } from "../../../src/sinks/chatops/outbox.js";
import { isAlertEvent } from "../../../src/state/event-schema.js";
import { captureLogger, makeEvent, nthAlert } from "./helpers.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pm-outbox-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function open(options: { maxEntries?: number; dead?: [number, DeadLetterReason][] } = {}) {
  const log = captureLogger();
  return {
    log,
    outbox: openOutbox<AlertEvent>({
      dir,
      name: "s",
      maxEntries: options.maxEntries ?? 100,
      isPayload: isAlertEvent,
      seqOf: (event) => event.seq,
      startHighWater: 0,
      logger: log.logger,
      nowMs: () => 1_000,
      onDurable: () => undefined,
      onDeadLetter: (count, reason) => options.dead?.push([count, reason]),
    }),
  };
}

const lines = async (file: string): Promise<string[]> =>
  (await readFile(join(dir, file), "utf8")).split("\n").filter((l) => l !== "");

describe("outbox", () => {
  it("persists appends before exposing them and forgets acknowledged entries across reopen", async () => {
    const outbox = await open().outbox;
    outbox.append(makeEvent(1, nthAlert(1)), 10);
    outbox.append(makeEvent(2, nthAlert(2)), 11);
    expect(outbox.entries()).toHaveLength(0);
    expect(outbox.size).toBe(2);
    await outbox.flush();
    const [first, second] = outbox.entries();
    expect(first).toMatchObject({ createdAtMs: 10, attempts: 0, nextAttemptAtMs: 10, payload: { seq: 1 } });
    await outbox.ack([first!.id]);
    await outbox.reschedule([{ ...second!, attempts: 1, nextAttemptAtMs: 99 }]);
    // the high-water record written when the new file was compacted at open, 2 records, 1 tombstone, 1 update
    expect(await lines("s.jsonl")).toHaveLength(5);
    await outbox.close();

    const reopened = await open().outbox;
    expect(reopened.entries()).toEqual([{ ...second!, attempts: 1, nextAttemptAtMs: 99 }]);
    expect(reopened.highWater).toBe(2); // seq 1 was delivered, yet it still counts as taken in
    expect(await lines("s.jsonl")).toEqual(['{"hw":2}', expect.stringContaining('"attempts":1') as string]);
    await reopened.close();
  });

  it("compacts atomically once tombstones dominate", async () => {
    const outbox = await open({ maxEntries: 1000 }).outbox;
    for (let i = 0; i < 300; i++) outbox.append(makeEvent(i, nthAlert(i)), i);
    await outbox.flush();
    const keep = outbox.entries().at(-1)!;
    await outbox.ack(
      outbox
        .entries()
        .slice(0, -1)
        .map((e) => e.id),
    );
    await outbox.flush();
    expect(await lines("s.jsonl")).toEqual(['{"hw":299}', JSON.stringify(keep)]);
    expect((await readdir(dir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    await outbox.close();
  });

  it("skips a torn last line with a warning", async () => {
    const good = JSON.stringify({
      id: "a",
      createdAtMs: 1,
      payload: makeEvent(1),
      attempts: 0,
      nextAttemptAtMs: 1,
    });
    await writeFile(join(dir, "s.jsonl"), `${good}\n{"id":"b","createdAtMs":2,"payl`);
    const { outbox, log } = open();
    const opened = await outbox;
    expect(opened.entries().map((e) => e.id)).toEqual(["a"]);
    expect(log.lines.some((l) => String(l.msg).includes("torn last line"))).toBe(true);
    await opened.close();
  });

  it("moves a file corrupt in the middle aside and starts clean", async () => {
    const good = JSON.stringify({
      id: "a",
      createdAtMs: 1,
      payload: makeEvent(1),
      attempts: 0,
      nextAttemptAtMs: 1,
    });
    await writeFile(join(dir, "s.jsonl"), `garbage\n${good}\n`);
    const { outbox, log } = open();
    const opened = await outbox;
    expect(opened.entries()).toEqual([]);
    expect((await readdir(dir)).some((f) => f === "s.jsonl.corrupt-1970-01-01T00-00-01-000Z")).toBe(true);
    expect(log.lines.some((l) => l.level === 50)).toBe(true);
    await opened.close();
  });

  it("moves the oldest entries to the dead-letter file when full", async () => {
    const dead: [number, DeadLetterReason][] = [];
    const outbox = await open({ maxEntries: 2, dead }).outbox;
    for (let i = 1; i <= 3; i++) {
      outbox.append(makeEvent(i, nthAlert(i)), i);
      await outbox.flush();
    }
    expect(outbox.entries().map((e) => e.payload.seq)).toEqual([2, 3]);
    expect(dead).toEqual([[1, "overflow"]]);
    const [deadLine] = await lines("s.dead.jsonl");
    expect(JSON.parse(deadLine!)).toMatchObject({ reason: "overflow", deadAtMs: 3, payload: { seq: 1 } });
    await outbox.close();
  });
});

describe("outbox state (notification groups)", () => {
  type Groups = Record<string, number>;
  const isGroups = (value: unknown): value is Groups =>
    typeof value === "object" && value !== null && Object.values(value).every((v) => typeof v === "number");
  const openWithState = () =>
    openOutbox<AlertEvent, Groups>({
      dir,
      name: "g",
      maxEntries: 100,
      isPayload: isAlertEvent,
      isState: isGroups,
      seqOf: (event) => event.seq,
      startHighWater: 0,
      logger: captureLogger().logger,
      nowMs: () => 1_000,
      onDurable: () => undefined,
      onDeadLetter: () => undefined,
    });

  it("writes the state in the same line as the acks, reads it back, and keeps it through compaction", async () => {
    const outbox = await openWithState();
    outbox.append(makeEvent(1, nthAlert(1)), 10);
    outbox.append(makeEvent(2, nthAlert(2)), 11);
    await outbox.flush();
    const [first, second] = outbox.entries();
    await outbox.ack([first!.id, second!.id], { "{}": 2 });
    const last = (await lines("g.jsonl")).at(-1)!;
    expect(JSON.parse(last)).toEqual({ ack: [first!.id, second!.id], state: { "{}": 2 } });
    // a kill -9 now: the file as it is
    const reopened = await openWithState();
    expect(reopened.state()).toEqual({ "{}": 2 });
    expect(reopened.entries()).toEqual([]);
    await reopened.ack([], { "{}": 3 }); // a repeat: a state with no entry
    await reopened.close(); // compacts
    expect(await lines("g.jsonl")).toEqual(['{"hw":2,"state":{"{}":3}}']);
    const third = await openWithState();
    expect(third.state()).toEqual({ "{}": 3 });
    await third.close();
    // the "killed" process's outbox still holds its append handle: closed, not left to the garbage collector (its
    // close also compacts the file from its stale state, after the assertions)
    await outbox.close();
  });

  it("a torn last line loses the acks and the state together, never one of them", async () => {
    const outbox = await openWithState();
    outbox.append(makeEvent(1, nthAlert(1)), 10);
    await outbox.flush();
    const [first] = outbox.entries();
    await outbox.ack([first!.id], { "{}": 1 });
    const text = await readFile(join(dir, "g.jsonl"), "utf8");
    await writeFile(join(dir, "g.jsonl"), text.slice(0, text.length - 10)); // crash mid-write
    const reopened = await openWithState();
    expect(reopened.state()).toBeUndefined();
    expect(reopened.entries().map((e) => e.payload.seq)).toEqual([1]); // sent again: at least once
    await reopened.close();
    await outbox.close(); // the "crashed" one still holds its append handle
  });
});
