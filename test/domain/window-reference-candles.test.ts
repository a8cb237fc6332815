// Which windows candle closes can start: exactly those windowReferenceIndex gives a reference between any two closes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { minSpacingMsFor, PriceHistory } from "../../src/domain/price-history.js";
import { INTERVAL_MS } from "../../src/domain/types.js";
import {
  candlesServeAWindow,
  REFERENCE_TOO_OLD,
  windowReferenceIndex,
  windowToleranceMs,
} from "../../src/domain/window-reference.js";
import { CANDLE_INTERVALS } from "../../src/upstream/server-rules.js";
import { p, T0 } from "./helpers.js";

const S = 1_000;
const MIN = 60 * S;
const H = 60 * MIN;
const CANDLE_BUCKETS_MS = CANDLE_INTERVALS.map((interval) => INTERVAL_MS[interval]);

describe("candlesServeAWindow", () => {
  it.each([
    {
      name: "shipped rules (10 s, 1 min) on 1min candles",
      windowsMs: [10 * S, MIN],
      retainMs: MIN,
      bucketMs: MIN,
      serves: false,
    },
    {
      name: "shipped rules on 10s candles (6 s < 10 s)",
      windowsMs: [10 * S, MIN],
      retainMs: MIN,
      bucketMs: 10 * S,
      serves: false,
    },
    {
      name: "a 10 min window: tolerance 60 s, a bucket",
      windowsMs: [10 * MIN],
      retainMs: 10 * MIN,
      bucketMs: MIN,
      serves: true,
    },
    {
      name: "a window a second shorter",
      windowsMs: [599 * S],
      retainMs: 599 * S,
      bucketMs: MIN,
      serves: false,
    },
    { name: "100 s on 10s candles", windowsMs: [100 * S], retainMs: 100 * S, bucketMs: 10 * S, serves: true },
    {
      name: "a 1 h window next to short ones",
      windowsMs: [10 * S, MIN, H],
      retainMs: H,
      bucketMs: MIN,
      serves: true,
    },
    { name: "no window", windowsMs: [], retainMs: H, bucketMs: MIN, serves: false },
    // a 1 d rule that leaves the target out still sizes its history: points ≥ 84.5 s apart, so 1min closes are
    // kept 2 min apart, more than the 10 s window's 84.5 s tolerance
    {
      name: "10 s on a history thinned by a 1 d retention",
      windowsMs: [10 * S],
      retainMs: 24 * H,
      bucketMs: MIN,
      serves: false,
    },
    // spacing exactly 60 s: every close kept, and the tolerance (the spacing) reaches it
    {
      name: "10 s on a history spaced exactly a bucket",
      windowsMs: [10 * S],
      retainMs: 1_022 * MIN,
      bucketMs: MIN,
      serves: true,
    },
  ])("$name: $serves", ({ windowsMs, retainMs, bucketMs, serves }) => {
    expect(candlesServeAWindow(windowsMs, retainMs, bucketMs)).toBe(serves);
  });

  it("says yes exactly when every gap between the closes a history keeps gives the window a reference", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CANDLE_BUCKETS_MS),
        fc.integer({ min: 1, max: 2 * 86_400 }),
        fc.integer({ min: 0, max: 2 * 86_400 }),
        (bucketMs, windowS, extraS) => {
          const windowMs = windowS * S;
          const retainMs = windowMs + extraS * S;
          const spacingMs = bucketMs * Math.max(1, Math.ceil(minSpacingMsFor(retainMs) / bucketMs));
          const toleranceMs = windowToleranceMs(windowMs, { minSpacingMs: minSpacingMsFor(retainMs) });
          // times are whole ms: a tolerance less than 1 ms short of the spacing still covers every real gap
          fc.pre(!(toleranceMs < spacingMs && toleranceMs > spacingMs - 1));
          const history = closesOver(retainMs, bucketMs);
          expect(history.size).toBeGreaterThanOrEqual(2);
          let everyGapServed = true;
          for (let i = 1; i < history.size; i++) {
            // the worst start: just before the next close, the newest point at or before it is the previous one
            const startMs = history.timeAt(i) - 1;
            if (windowReferenceIndex(history, startMs + windowMs, windowMs) === REFERENCE_TOO_OLD)
              everyGapServed = false;
          }
          expect(candlesServeAWindow([windowMs], retainMs, bucketMs)).toBe(everyGapServed);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("is monotone: a longer window, a shorter candle interval or another window never takes a yes back", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 86_400 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 86_400 }),
        fc.integer({ min: 0, max: CANDLE_BUCKETS_MS.length - 1 }),
        fc.integer({ min: 1, max: 86_400 }),
        (windowsS, longerS, bucketIndex, otherS) => {
          const windowsMs = windowsS.map((s) => s * S);
          const longer = [...windowsMs.slice(1), (windowsS[0]! + longerS) * S];
          const retainMs = Math.max(...longer, otherS * S);
          const bucketMs = CANDLE_BUCKETS_MS[bucketIndex]!;
          if (!candlesServeAWindow(windowsMs, retainMs, bucketMs)) return;
          expect(candlesServeAWindow(longer, retainMs, bucketMs)).toBe(true);
          expect(candlesServeAWindow([...windowsMs, otherS * S], retainMs, bucketMs)).toBe(true);
          for (const shorterMs of CANDLE_BUCKETS_MS.slice(0, bucketIndex))
            expect(candlesServeAWindow(windowsMs, retainMs, shorterMs)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});

/** A history retaining `retainMs`, fed a close a bucket apart over more than its retention, oldest first. */
function closesOver(retainMs: number, bucketMs: number): PriceHistory {
  const history = new PriceHistory(retainMs);
  const closes = Math.ceil(retainMs / bucketMs) + 3;
  const lastMs = Math.floor(T0 / bucketMs) * bucketMs;
  for (let i = closes - 1; i >= 0; i--) history.push(lastMs - i * bucketMs, p("100"));
  return history;
}
