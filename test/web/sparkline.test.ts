// The sparkline's SVG path: scaled by time and value into the box, with the degenerate series drawn sensibly.
import { describe, expect, it } from "vitest";
import { sparklinePath } from "../../web/src/sparkline.js";

const box = { width: 100, height: 20, pad: 0 };

describe("sparklinePath", () => {
  it.each<[string, { atMs: number; value: number }[], string]>([
    ["no point", [], ""],
    ["one point: a short dash at mid height", [{ atMs: 5, value: 3 }], "M96 10H100"],
    [
      "rising: lowest at the bottom, highest at the top, x by time",
      [
        { atMs: 0, value: 1 },
        { atMs: 25, value: 2 },
        { atMs: 100, value: 3 },
      ],
      "M0 20L25 10L100 0",
    ],
    [
      "flat: a line through the middle",
      [
        { atMs: 0, value: 7 },
        { atMs: 10, value: 7 },
      ],
      "M0 10L100 10",
    ],
    [
      "one shared time: x by index",
      [
        { atMs: 3, value: 1 },
        { atMs: 3, value: 0 },
        { atMs: 3, value: 1 },
      ],
      "M0 0L50 20L100 0",
    ],
    [
      "values that are not numbers are skipped",
      [
        { atMs: 0, value: 1 },
        { atMs: 50, value: Number.NaN },
        { atMs: 100, value: 2 },
      ],
      "M0 20L100 0",
    ],
  ])("%s", (_name, points, expected) => {
    expect(sparklinePath(points, box)).toBe(expected);
  });

  it("keeps the stroke inside the padding and rounds to a tenth", () => {
    const d = sparklinePath(
      [
        { atMs: 0, value: 0 },
        { atMs: 3, value: 1 },
      ],
      { width: 10, height: 10, pad: 1 },
    );
    expect(d).toBe("M1 9L9 1");
    expect(
      sparklinePath(
        [
          { atMs: 0, value: 0 },
          { atMs: 3, value: 1 },
          { atMs: 9, value: 0.5 },
        ],
        { width: 10, height: 10, pad: 1 },
      ),
    ).toBe("M1 9L3.7 1L9 5");
  });
});
