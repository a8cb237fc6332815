// Skipped upstream list items are logged once per burst: the first of each kind at warn, the rest at debug.
import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createSkippedItemLog, skipKind } from "../../src/upstream/skip-log.js";
import type { SkippedItem } from "../../src/upstream/index.js";

interface Line {
  readonly level: number;
  readonly msg: string;
  readonly field?: string;
  readonly previousBurstCount?: number;
}

/** A logger writing parsed JSON lines into an array (pino's injected destination). */
function capture(): { lines: Line[]; log: ReturnType<typeof createSkippedItemLog>; at: { ms: number } } {
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Line);
      done();
    },
  });
  const at = { ms: 0 };
  const log = createSkippedItemLog({
    logger: pino({ level: "debug" }, stream),
    nowMs: () => at.ms,
    quietMs: 60_000,
    maxKinds: 2,
  });
  return { lines, log, at };
}

const item = (field: string, endpoint: SkippedItem["endpoint"] = "publishers"): SkippedItem => ({
  endpoint,
  field,
  expected: "0x-prefixed hex string",
});
const WARN = 40;
const DEBUG = 20;

describe("skipped item log", () => {
  it("names a kind by endpoint and field without indices", () => {
    expect(skipKind(item("[3].components[12].price"))).toBe("publishers [].components[].price");
  });

  it.each([
    {
      name: "the same bad field on every poll is one warn, then debug",
      steps: [
        [0, item("[0].components[1].price")],
        [10_000, item("[0].components[1].price")],
        [20_000, item("[2].components[0].price")],
      ] as const,
      levels: [WARN, DEBUG, DEBUG],
    },
    {
      name: "a new burst after a quiet spell warns again, with the count of the last one",
      steps: [
        [0, item("[0].type")],
        [30_000, item("[0].type")],
        [90_000, item("[0].type")],
      ] as const,
      levels: [WARN, DEBUG, WARN],
    },
    {
      name: "another field or endpoint is another kind",
      steps: [
        [0, item("[0].type")],
        [1, item("[0].nb_feeds")],
        [2, item("data[0].close", "candlestick")],
      ] as const,
      levels: [WARN, WARN, WARN],
    },
  ])("$name", ({ steps, levels }) => {
    const { lines, log, at } = capture();
    for (const [ms, skipped] of steps) {
      at.ms = ms;
      log(skipped);
    }
    expect(lines.map((line) => line.level)).toEqual(levels);
    expect(lines[0]).toMatchObject({ field: steps[0][1].field, previousBurstCount: 0 });
  });

  it("reports how many skips the previous burst had when a new one starts", () => {
    const { lines, log, at } = capture();
    for (const ms of [0, 1_000, 2_000, 200_000]) {
      at.ms = ms;
      log(item("[0].type"));
    }
    expect(lines[3]).toMatchObject({ level: WARN, previousBurstCount: 3 });
  });

  it("stays bounded: past maxKinds the kinds are forgotten", () => {
    const { lines, log } = capture();
    for (const field of ["[0].a", "[0].b", "[0].c", "[0].a"]) log(item(field));
    expect(lines.map((line) => line.level)).toEqual([WARN, WARN, WARN, WARN]);
  });
});
