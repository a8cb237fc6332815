// The young generation's holder: V8 shrinks it on a quiet heap, and the holder lets one growth step take it back.
import { describe, expect, it } from "vitest";
import { youngGenerationHolder } from "../src/young-generation.js";

const MB = 1024 * 1024;

/** The flags a holder of 8 MB sets over a series of readings of the young generation's size. */
function flagsOver(readingsMb: readonly number[]): string[] {
  const set: string[] = [];
  let at = 0;
  const hold = youngGenerationHolder(
    8 * MB,
    () => readingsMb[at++]! * MB,
    (flags) => set.push(flags),
  );
  for (let i = 0; i < readingsMb.length; i++) hold();
  return set;
}

describe("youngGenerationHolder", () => {
  it("sets nothing while the young generation keeps its size", () => {
    expect(flagsOver([8, 8, 8, 8])).toEqual([]);
  });

  it("lets one growth step take a shrunk young generation back to its size, then holds growth again", () => {
    expect(flagsOver([8, 1, 1, 8, 8, 2, 8])).toEqual([
      "--semi-space-growth-factor=8",
      "--semi-space-growth-factor=1",
      "--semi-space-growth-factor=4",
      "--semi-space-growth-factor=1",
    ]);
  });

  it("rounds the factor up (one step, at most one step's overshoot) and follows a further shrink", () => {
    expect(flagsOver([3, 1.5, 9])).toEqual([
      "--semi-space-growth-factor=3",
      "--semi-space-growth-factor=6",
      "--semi-space-growth-factor=1",
    ]);
  });

  it("holds growth when the size cannot be read (0)", () => {
    expect(flagsOver([0, 0])).toEqual([]);
  });
});
