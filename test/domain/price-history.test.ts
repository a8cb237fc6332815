// PriceHistory keeps prices exactly in typed arrays (limbs + scale, objects for the rare out-of-range raw):
// every price read back equals the one pushed, through ring growth, wrap-around and warm-up merges.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ScaledPrice } from "../../src/domain/price.js";
import { PriceHistory } from "../../src/domain/price-history.js";
import { T0 } from "./helpers.js";

const raw = fc.oneof(
  fc.bigInt({ min: 1n, max: (1n << 64n) - 1n }),
  fc.bigInt({ min: 1n << 64n, max: (1n << 128n) - 1n }),
  fc.bigInt({ min: 1n << 128n, max: 1n << 200n }),
  fc.bigInt({ min: -(1n << 70n), max: 0n }),
);
const price = fc.tuple(raw, fc.oneof(fc.constant(18), fc.integer({ min: 0, max: 300 })));

describe("PriceHistory storage", () => {
  it("reads back every kept price exactly (raw, decimals, approx) across growth and wrap-around", () => {
    fc.assert(
      fc.property(
        fc.array(price, { minLength: 1, maxLength: 400 }),
        fc.integer({ min: 4, max: 300 }),
        (points, capacity) => {
          // spacing retain / (capacity - 2) ≤ 1 s keeps every point until the window or the capacity drops it
          const history = new PriceHistory(1000 * (capacity - 2), capacity);
          points.forEach(([r, d], i) => history.push(T0 + i * 1000, new ScaledPrice(r, d)));
          const kept = points.slice(points.length - history.size);
          expect(history.size).toBeGreaterThanOrEqual(Math.min(points.length, history.capacity - 2));
          kept.forEach(([r, d], i) => {
            const back = history.priceAt(i);
            expect(back?.raw).toBe(r);
            expect(back?.decimals).toBe(d);
            expect(history.approxAt(i)).toBe(new ScaledPrice(r, d).approx);
            expect(history.timeAt(i)).toBe(T0 + (points.length - history.size + i) * 1000);
          });
          expect(history.priceAt(history.size)).toBeUndefined();
          expect(history.priceAt(-1)).toBeUndefined();
        },
      ),
      { numRuns: 200 },
    );
  });

  it("keeps exact prices through a warm-up merge into a grown ring", () => {
    const history = new PriceHistory(500_000, 512);
    for (let i = 0; i < 200; i++) history.push(T0 + i * 1000, new ScaledPrice(10n ** 30n + BigInt(i), 18));
    history.insertAll([{ atMs: T0 - 5000, price: new ScaledPrice(-(1n << 130n), 2) }]);
    expect(history.size).toBe(201);
    expect(history.priceAt(0)?.raw).toBe(-(1n << 130n));
    expect(history.priceAt(200)?.raw).toBe(10n ** 30n + 199n);
  });
});
