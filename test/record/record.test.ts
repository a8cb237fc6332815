// The recording: lines round-trip through the writer and reader, files rotate and are pruned, nothing secret is kept, damage is named.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { readRecording } from "../../src/backtest/reader.js";
import { PmError } from "../../src/domain/errors.js";
import { OK_POLL_KEYS, RESPONSE_KEYS, type RecordLine } from "../../src/record/format.js";
import { createRecorder } from "../../src/record/recorder.js";
import { createRecordingWriter } from "../../src/record/writer.js";
import { okPoll, pairPriceBody, tempDir, writeRecording } from "../backtest/helpers.js";

const T0 = Date.parse("2026-11-20T10:00:00.000Z");
const lines = (n: number): RecordLine[] =>
  Array.from({ length: n }, (_, i) => okPoll("t", T0 + i, pairPriceBody("ETH/USD", 2000 + i, T0 + i))).flat();

describe("recording writer and reader", () => {
  it("round-trips every line in order, across rotated files, each starting with its header", async () => {
    const dir = tempDir();
    const written = lines(200);
    await writeRecording(dir, written, 8_000);
    const files = readdirSync(dir);
    expect(files.length).toBeGreaterThan(5);
    const items = [...readRecording(dir)];
    expect(items.every((item) => item.kind === "line")).toBe(true);
    const read = items.flatMap((item) => (item.kind === "line" ? [item.line] : []));
    expect(read.filter((l) => l.type !== "file")).toEqual(written);
    expect(read.filter((l) => l.type === "file")).toHaveLength(files.length);
    expect(items[0]?.kind === "line" && items[0].line.type).toBe("file");
  });

  it("keeps at most maxFiles files, deleting the oldest", async () => {
    const dir = tempDir();
    await writeRecording(dir, lines(200), 8_000, 3);
    const files = readdirSync(dir).sort();
    expect(files).toHaveLength(3);
    expect(files[2]).toMatch(/-0000(\d\d)\.jsonl\.gz$/);
    expect(Number(/-(\d+)\.jsonl/.exec(files[0] ?? "")?.[1])).toBeGreaterThan(1);
  });

  it("drops (and counts) lines past its buffer bound instead of growing", () => {
    const dir = tempDir();
    const outcomes: string[] = [];
    const writer = createRecordingWriter({
      dir,
      maxFileBytes: 1 << 20,
      maxFiles: 0,
      maxBufferedBytes: 64 * 1024,
      nowMs: () => T0,
      logger: pino({ level: "silent" }),
      onLine: (outcome) => outcomes.push(outcome),
    });
    // written synchronously: nothing drains in between
    for (const line of lines(400)) writer.write(line);
    expect(writer.stats().dropped).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o === "dropped")).toHaveLength(writer.stats().dropped);
    return writer.close();
  });

  it("a file cut short still gives the lines flushed before the cut, then names the damage", async () => {
    const dir = tempDir();
    const written = lines(50);
    const writer = createRecordingWriter({
      dir,
      maxFileBytes: 1 << 20,
      maxFiles: 0,
      maxBufferedBytes: 1 << 20,
      nowMs: () => T0,
      logger: pino({ level: "silent" }),
    });
    for (const line of written) writer.write(line);
    await writer.flush(); // what a killed daemon leaves: flushed data, no gzip trailer
    const [name] = readdirSync(dir);
    const copy = join(tempDir(), name ?? "");
    writeFileSync(copy, readFileSync(join(dir, name ?? "")));
    await writer.close();
    const items = [...readRecording(join(copy, ".."))];
    expect(items.filter((i) => i.kind === "line")).toHaveLength(written.length + 1);
    const last = items.at(-1);
    expect(last?.kind).toBe("problem");
    expect(last?.kind === "problem" && last.reason).toMatch(/compressed stream damaged/);
  });

  // replay checks lines with these keys in this order by hand (flatLineCheck): a reorder here would silently slow it
  it("writes a response line and an ok poll line with the keys in the order the replay's fast path expects", () => {
    const { out, recorder } = recordedResponse("http://127.0.0.1:1/node/v1/data/ETH/USD");
    recorder.polled("t", { ok: true }, false);
    expect(out.map((line) => Object.keys(line))).toEqual([[...RESPONSE_KEYS], [...OK_POLL_KEYS]]);
  });

  it("holds no secrets: URLs redacted, no headers, and errors by code and message only", () => {
    const { out, recorder } = recordedResponse(
      "http://user:hunter2@127.0.0.1:1/node/v1/data/ETH/USD?apiKey=s3cret&interval=1s",
    );
    recorder.polled(
      "t",
      { ok: false, error: new PmError("PM_ERR_UPSTREAM_TIMEOUT", "slow", { retryable: true }) },
      false,
    );
    const text = JSON.stringify(out);
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("s3cret");
    expect(out[0]).toMatchObject({ type: "response", target: "t", purpose: "poll", requestAtMs: T0 - 3 });
    expect(Object.keys(out[0] ?? {})).not.toContain("headers");
    expect(out[1]).toEqual({
      type: "poll",
      atMs: T0,
      target: "t",
      ok: false,
      code: "PM_ERR_UPSTREAM_TIMEOUT",
      message: "slow",
      retryable: true,
    });
  });
});

/** A recorder writing into `out` at T0, which has recorded one 200 response of target "t" from `url` (3 ms). */
function recordedResponse(url: string): { out: RecordLine[]; recorder: ReturnType<typeof createRecorder> } {
  const out: RecordLine[] = [];
  const recorder = createRecorder(
    (line) => out.push(line),
    () => T0,
  );
  recorder.within("t", "poll", () =>
    recorder.response({
      endpoint: "pair_price",
      url,
      durationMs: 3,
      status: 200,
      errorCode: null,
      body: "{}",
    }),
  );
  return { out, recorder };
}
