// The handover's price points text: exact round trip, thinning to the size cap, and refusal of bad or oversized text.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PmError } from "../../src/domain/errors.js";
import { ScaledPrice } from "../../src/domain/price.js";
import type { PricePoint } from "../../src/domain/price-history.js";
import {
  decodePricePoints,
  encodePricePoints,
  MAX_ENCODED_POINTS_CHARS,
} from "../../src/domain/price-points-codec.js";
import { T0 } from "./helpers.js";

const point = (atMs: number, raw: bigint, decimals = 8): PricePoint => ({
  atMs,
  price: new ScaledPrice(raw, decimals),
});
const plain = (points: readonly PricePoint[]): [number, string, number][] =>
  points.map(({ atMs, price }) => [atMs, price.raw.toString(), price.decimals]);

/** Strictly increasing times and positive prices at a few scales, as a history holds them. */
const histories = fc
  .array(
    fc.record({
      stepMs: fc.integer({ min: 1, max: 120_000 }),
      raw: fc.bigInt({ min: 1n, max: (1n << 200n) - 1n }),
      decimals: fc.constantFrom(0, 8, 18, 63),
    }),
    { maxLength: 200 },
  )
  .map((steps) => {
    let atMs = T0;
    return steps.map(({ stepMs, raw, decimals }) => point((atMs += stepMs), raw, decimals));
  });

describe("encodePricePoints / decodePricePoints", () => {
  it("round-trips times and exact prices, a point at another scale naming its own", () => {
    const points = [
      point(T0, 8_618_412_000_000n),
      point(T0 + 1_000, 8_618_413_000_000n),
      point(T0 + 2_003, 5n, 18),
    ];
    const text = encodePricePoints(points);
    expect(text).toBe(`1;8;${T0};0:8618412000000,1000:8618413000000,1003:5:18`);
    expect(plain(decodePricePoints(text))).toEqual(plain(points));
  });

  it("encodes no points as empty text, and decodes it as none (a target with no history yet)", () => {
    expect(encodePricePoints([])).toBe("");
    expect(decodePricePoints("")).toEqual([]);
  });

  it("round-trips any history under the size cap (property)", () => {
    fc.assert(
      fc.property(histories, (points) => {
        const text = encodePricePoints(points);
        expect(text.length).toBeLessThanOrEqual(MAX_ENCODED_POINTS_CHARS);
        if (text.length < MAX_ENCODED_POINTS_CHARS / 2)
          expect(plain(decodePricePoints(text))).toEqual(plain(points));
      }),
    );
  });

  it("thins a history over the cap to every other point, keeping the newest, until it fits", () => {
    const huge = 10n ** 70n;
    const points = Array.from({ length: 1024 }, (_, i) => point(T0 + i * 1_000, huge + BigInt(i)));
    const text = encodePricePoints(points);
    expect(text.length).toBeLessThanOrEqual(MAX_ENCODED_POINTS_CHARS);
    const decoded = decodePricePoints(text);
    expect(decoded.length).toBeLessThan(points.length);
    expect(decoded.at(-1)?.atMs).toBe(T0 + 1023 * 1_000);
    expect(decoded.every((p) => points.some((q) => q.atMs === p.atMs && q.price.raw === p.price.raw))).toBe(
      true,
    );
  });

  it.each([
    ["another format", `2;8;${T0};0:1`, /unknown format/],
    ["a missing field", `1;8;${T0}`, /not 4 fields/],
    ["an extra field", `1;8;${T0};0:1;x`, /not 4 fields/],
    ["decimals not a number", `1;x;${T0};0:1`, /decimals is not a whole number/],
    ["decimals too large", `1;64;${T0};0:1`, /decimals 64 over 63/],
    ["a negative start", `1;8;-5;0:1`, /start is not a whole number/],
    ["a zero price", `1;8;${T0};0:0`, /point 0: not <dtMs>:<raw>/],
    ["a negative price", `1;8;${T0};0:-3`, /point 0: not <dtMs>:<raw>/],
    ["a fractional step", `1;8;${T0};0:1,1.5:2`, /point 1's step is not a whole number/],
    ["two points at one time", `1;8;${T0};0:1,0:2`, /point 1: same time as the previous/],
    ["a time past the safe range", `1;8;${T0};0:1,9999999999999999:2`, /point 1: time out of range/],
    ["a stray field in a point", `1;8;${T0};0:1:8:9`, /point 0: not/],
    ["a price of 79 digits", `1;8;${T0};0:${"9".repeat(79)}`, /point 0: not/],
  ])("refuses %s with PM_ERR_STATE", (_, text, message) => {
    expect(() => decodePricePoints(text)).toThrow(PmError);
    expect(() => decodePricePoints(text)).toThrow(message);
  });

  it("refuses text over the cap before reading it", () => {
    const text = `1;8;${T0};0:1${",1000:1".repeat(MAX_ENCODED_POINTS_CHARS / 7)}`;
    expect(() => decodePricePoints(text)).toThrow(/over the limit of 32768/);
  });
});
