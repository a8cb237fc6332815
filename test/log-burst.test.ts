// One log line per burst of refusals: the first at once, then a count per window, silence when it stops.
import pino from "pino";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { createBurstLog } from "../src/log-burst.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

it("logs the first occurrence, then one summary per window with the count, then nothing once quiet", () => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "info" },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const burst = createBurstLog({ logger, message: "refused", windowMs: 10_000 });
  const summary = () => lines.map((line) => [line["msg"], line["count"], line["remote"]]);

  for (let i = 0; i < 50; i++) burst.note({ remote: `10.0.0.${i}` });
  expect(summary()).toEqual([["refused", 1, "10.0.0.0"]]);
  vi.advanceTimersByTime(10_000);
  expect(summary()).toEqual([
    ["refused", 1, "10.0.0.0"],
    ["refused (repeated)", 49, "10.0.0.49"],
  ]);
  burst.note({ remote: "a" });
  vi.advanceTimersByTime(10_000);
  vi.advanceTimersByTime(30_000); // a quiet window closes the burst: no empty summaries
  expect(lines).toHaveLength(3);
  burst.note({ remote: "b" }); // a new burst is reported at once again
  expect(summary().at(-1)).toEqual(["refused", 1, "b"]);
  burst.close();
  expect(vi.getTimerCount()).toBe(0);
});
