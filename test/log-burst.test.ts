// One log line per burst of a repeating condition: the first at once, a count per window, nothing once quiet; no timer.
import pino from "pino";
import { expect, it } from "vitest";
import { createBurstLog } from "../src/log-burst.js";

/** A burst log on a hand-moved clock, writing parsed lines (pino's injected destination) at `level`. */
function capture(level: "info" | "debug", debugEachRepeat = false) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const at = { ms: 0 };
  const burst = createBurstLog({
    logger,
    message: "refused",
    nowMs: () => at.ms,
    windowMs: 10_000,
    debugEachRepeat,
  });
  return { lines, at, burst };
}

it("logs the first occurrence, then one summary per window with the count, then nothing once quiet", () => {
  const { lines, at, burst } = capture("info");
  const summary = () => lines.map((line) => [line["msg"], line["count"], line["remote"]]);

  for (let i = 0; i < 50; i++) burst.note({ remote: `10.0.0.${i}` });
  expect(summary()).toEqual([["refused", 1, "10.0.0.0"]]);
  at.ms = 9_999;
  burst.note({ remote: "a" });
  expect(summary()).toHaveLength(1);
  at.ms = 10_000; // a window after the first line: the next occurrence writes the count, with its own fields
  burst.note({ remote: "b" });
  expect(summary()).toEqual([
    ["refused", 1, "10.0.0.0"],
    ["refused (repeated)", 51, "b"],
  ]);
  at.ms = 15_000;
  burst.note({ remote: "c" });
  at.ms = 100_000; // quiet for a window: a new burst, reported at once, with the size of the last one
  burst.note({ remote: "d" });
  expect(summary()).toHaveLength(3);
  expect(lines[2]).toMatchObject({
    msg: "refused",
    count: 1,
    remote: "d",
    previousBurstCount: 53,
    level: 40,
  });
  at.ms = 100_001;
  burst.note({ remote: "e" });
  burst.close(); // shutdown writes what is still counted
  expect(summary().at(-1)).toEqual(["refused (repeated)", 1, "e"]);
  burst.close();
  expect(lines).toHaveLength(4);
});

it("keeps a burst per kind, and writes each repeat at debug only when asked", () => {
  for (const debugEachRepeat of [false, true]) {
    const { lines, at, burst } = capture("debug", debugEachRepeat);
    burst.note({ n: 1 }, "host");
    burst.note({ n: 2 }, "origin");
    at.ms = 1;
    burst.note({ n: 3 }, "host");
    const levels = lines.map((line) => [line["level"], line["n"]]);
    expect(levels).toEqual(
      debugEachRepeat
        ? [
            [40, 1],
            [40, 2],
            [20, 3],
          ]
        : [
            [40, 1],
            [40, 2],
          ],
    );
  }
});

it("stays bounded: past maxKinds the kinds are forgotten and warn again", () => {
  const lines: unknown[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(line) });
  const burst = createBurstLog({ logger, message: "m", nowMs: () => 0, windowMs: 10_000, maxKinds: 2 });
  for (const kind of ["a", "b", "c", "a"]) burst.note({}, kind);
  expect(lines).toHaveLength(4);
});
