// The young generation's holder: V8 shrinks it on a quiet heap, and the holder lets one growth step take it back.
import { describe, expect, it } from "vitest";
import { youngGenerationHolder } from "../src/young-generation.js";

const MB = 1024 * 1024;

/** The flags a holder of 4 MB per half sets over a series of readings (MB), and what each check returned. */
function holderOver(readingsMb: readonly number[]): { flags: string[]; growing: boolean[] } {
  const flags: string[] = [];
  let at = 0;
  const hold = youngGenerationHolder(
    4 * MB,
    () => readingsMb[at++]! * MB,
    (text) => flags.push(text),
  );
  const growing = readingsMb.map(() => hold());
  return { flags, growing };
}

describe("youngGenerationHolder", () => {
  it("sets nothing while the young generation keeps its size (V8 gives a little less than the target)", () => {
    expect(holderOver([4, 3.93, 4, 3.93])).toEqual({ flags: [], growing: [false, false, false, false] });
  });

  it("lets one growth step take a shrunk young generation back to the target, then holds growth again", () => {
    expect(holderOver([4, 0.98, 0.98, 3.93, 4, 1.97, 3.93])).toEqual({
      flags: [
        "--semi-space-growth-factor=4",
        "--semi-space-growth-factor=1",
        "--semi-space-growth-factor=2",
        "--semi-space-growth-factor=1",
      ],
      growing: [false, true, true, false, false, true, false],
    });
  });

  it("never grows past the target: the factor rounds down, and a size over half the target is kept", () => {
    expect(holderOver([1.5, 2.5, 8])).toEqual({
      flags: ["--semi-space-growth-factor=2", "--semi-space-growth-factor=1"],
      growing: [true, false, false],
    });
  });

  it("holds growth when the size cannot be read (0)", () => {
    expect(holderOver([0, 0])).toEqual({ flags: [], growing: [false, false] });
  });
});
