// PriceHistory keeps prices exactly in typed arrays (four 32-bit words + scale, objects for the rare out-of-range raw):
// every price read back equals the one pushed, through ring growth, wrap-around and warm-up merges, and
// window lookups find the same point a linear scan does.
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

/** How many of `pushedMs` (increasing times) a history keeps: those the window covers and one older, at most `capacity`. */
function expectedKept(pushedMs: readonly number[], retainMs: number, capacity: number): number {
  const cutoffMs = (pushedMs[pushedMs.length - 1] ?? 0) - retainMs;
  const newer = pushedMs.filter((atMs) => atMs > cutoffMs).length;
  return Math.min(capacity, newer + (newer < pushedMs.length ? 1 : 0));
}

describe("PriceHistory storage", () => {
  it("reads back every kept price exactly (raw, decimals, approx) across growth and wrap-around", () => {
    fc.assert(
      fc.property(
        fc.array(price, { minLength: 1, maxLength: 400 }),
        fc.integer({ min: 4, max: 300 }),
        (points, capacity) => {
          // spacing retain / (capacity - 2) ≤ 1 s keeps every point until the window or the capacity drops it
          const history = new PriceHistory(1000 * (capacity - 2), capacity);
          // a price in hex form (as decoded, up to 64 digits) half of the time, else a bigint
          const priceOf = (r: bigint, d: number, i: number): ScaledPrice =>
            (i % 2 === 0 && r >= 0n && r < 1n << 256n
              ? ScaledPrice.fromHex(`0x${r.toString(16)}`, d)
              : null) ?? new ScaledPrice(r, d);
          points.forEach(([r, d], i) => history.push(T0 + i * 1000, priceOf(r, d, i)));
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

  it("finds the newest point at or before any time, whatever the spacing", () => {
    // mostly periodic with jitter, some gaps of up to 200 s: irregular rings of up to 300 points,
    // wrapped around when the capacity is small
    const gap = fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: 950, max: 1050 }) },
      { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 200_000 }) },
    );
    fc.assert(
      fc.property(
        fc.array(gap, { minLength: 1, maxLength: 300, size: "large" }),
        fc.array(fc.double({ min: -0.1, max: 1.1, noNaN: true })),
        fc.option(fc.integer({ min: 4, max: 100 })),
        (gaps, probes, capacity) => {
          // a minimum spacing of 900 ms keeps every point until the window (~15 min with the full
          // capacity) or the capacity drops it
          const history = new PriceHistory(900 * ((capacity ?? 1024) - 2), capacity ?? 1024);
          let atMs = T0;
          const pushed: number[] = [];
          for (const step of gaps) {
            pushed.push((atMs += step));
            history.push(atMs, new ScaledPrice(1n, 0));
          }
          // every point is kept until the window or the capacity drops it: the newest of those pushed
          const times = pushed.slice(pushed.length - history.size);
          expect(times.length).toBe(expectedKept(pushed, history.retainMs, history.capacity));
          const span = atMs - T0;
          for (const probe of [...probes, 0, 1]) {
            const at = Math.round(T0 + probe * span);
            let expected = -1;
            times.forEach((t, i) => {
              if (t <= at) expected = i;
            });
            expect(history.indexAtOrBefore(at)).toBe(expected);
          }
          expect(history.indexAtOrBefore(Number.NaN)).toBe(-1);
          expect(history.indexAtOrBefore(Number.NEGATIVE_INFINITY)).toBe(-1);
          expect(history.indexAtOrBefore(Number.POSITIVE_INFINITY)).toBe(history.size - 1);
          // every point itself, and the instant before it (integer times, gaps ≥ 1 ms)
          times.forEach((t, i) => {
            expect(history.indexAtOrBefore(t)).toBe(i);
            expect(history.indexAtOrBefore(t - 1)).toBe(i - 1);
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it("copies a wrapped ring in order when it grows (sparse points, then dense ones)", () => {
    // 40 points 10 s apart keep the 60 s window at 7 points while the ring's start moves on through its first
    // 64 slots; 300 points 250 ms apart then run past the ring's end onto its start and grow it (to 128, then 256)
    // twice, each time wrapped
    const history = new PriceHistory(60_000);
    const pushed: { atMs: number; raw: bigint; decimals: number }[] = [];
    const times = [
      ...Array.from({ length: 40 }, (_, i) => T0 + i * 10_000),
      ...Array.from({ length: 300 }, (_, i) => T0 + 390_000 + (i + 1) * 250),
    ];
    for (const [i, atMs] of times.entries()) {
      // every seventh raw value out of the words' range (kept as the object), a scale per point
      const raw = i % 7 === 3 ? -(BigInt(i) << 90n) : 10n ** 20n + BigInt(i) * 1_000_003n;
      const decimals = i % 19;
      pushed.push({ atMs, raw, decimals });
      history.push(atMs, new ScaledPrice(raw, decimals));
      const kept = pushed.slice(
        pushed.length - expectedKept(times.slice(0, i + 1), 60_000, history.capacity),
      );
      const back = kept.map((_, k) => ({
        atMs: history.timeAt(k),
        raw: history.priceAt(k)?.raw,
        decimals: history.priceAt(k)?.decimals,
        approx: history.approxAt(k),
      }));
      const expected = kept.map((p) => ({ ...p, approx: new ScaledPrice(p.raw, p.decimals).approx }));
      expect(history.size).toBe(kept.length);
      expect(back).toEqual(expected);
    }
    expect(history.size).toBe(241); // 60 s of points 250 ms apart and the one at the cutoff: grown past 128
  });

  it("keeps a price of a negative or fractional scale as it is", () => {
    const history = new PriceHistory(60_000);
    const odd = [new ScaledPrice(12_345n, -1), new ScaledPrice(12_345n, 1.5), new ScaledPrice(-7n, -3)];
    odd.forEach((price, i) => history.push(T0 + i * 1000, price));
    odd.forEach((price, i) => {
      const back = history.priceAt(i);
      expect(back?.raw).toBe(price.raw);
      expect(back?.decimals).toBe(price.decimals);
      expect(back?.text).toBe(price.text);
      expect(history.approxAt(i)).toBe(price.approx);
    });
  });

  it("stores a price decoded from hex from its digits, without building its bigint", () => {
    const history = new PriceHistory(60_000);
    const text = "0x10f0cf064dd59200000";
    const price = ScaledPrice.fromHex(text, 18)!;
    history.push(T0, price);
    // sameHexAs says yes only while neither price built its bigint
    expect(price.sameHexAs(ScaledPrice.fromHex(text, 18)!)).toBe(true);
    expect(history.priceAt(0)?.raw).toBe(BigInt(text));
    expect(history.approxAt(0)).toBe(price.approx);
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
