// The outbox's disk writer at shutdown: close() settles only once every write queued before it is on disk.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openOutboxDisk } from "../../../src/sinks/chatops/outbox-disk.js";
import { captureLogger } from "./helpers.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pm-outbox-disk-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const openDisk = (log = captureLogger()) =>
  openOutboxDisk({
    file: join(dir, "s.jsonl"),
    deadFile: join(dir, "s.dead.jsonl"),
    maxDeadBytes: 1_000,
    logger: log.logger,
  });

describe("outbox disk close", () => {
  it("settles only after the writes queued before it are on disk", async () => {
    const disk = await openDisk();
    // the first write waits for the test: close() cannot settle before it unless it does not wait for writes
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    void disk.run(async () => {
      await gate;
      await disk.append(["one\n"]);
    });
    void disk.run(() => disk.append(["two\n"]));
    let settled = false;
    const closing = disk.close().then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    release();
    await closing;
    expect(await readFile(join(dir, "s.jsonl"), "utf8")).toBe("one\ntwo\n");
  });

  it("waits for a write queued while it waits, and refuses (logged) one queued after it settled", async () => {
    const log = captureLogger();
    const disk = await openDisk(log);
    void disk.run(() => disk.append(["one\n"]));
    const closing = disk.close();
    void disk.run(() => disk.append(["two\n"]));
    await closing;
    expect(await readFile(join(dir, "s.jsonl"), "utf8")).toBe("one\ntwo\n");
    await disk.run(() => disk.append(["three\n"]));
    expect(await readFile(join(dir, "s.jsonl"), "utf8")).toBe("one\ntwo\n");
    expect(log.lines).toContainEqual(
      expect.objectContaining({ code: "PM_ERR_STATE", msg: "outbox write failed" }),
    );
  });
});
