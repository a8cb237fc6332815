// Which windows candle closes warm: those longer than the spacing of the closes a history keeps; shorter ones get
// verdicts from closes only until their own polls serve them, a window (at most one spacing) after the start.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PriceHistory } from "../../src/domain/price-history.js";
import { INTERVAL_MS } from "../../src/domain/types.js";
import {
  candlesWarmAWindow,
  keptCloseSpacingMs,
  windowReferenceIndex,
} from "../../src/domain/window-reference.js";
import { CANDLE_INTERVALS } from "../../src/upstream/server-rules.js";
import { p, T0 } from "./helpers.js";

const S = 1_000;
const MIN = 60 * S;
const H = 60 * MIN;
const D = 24 * H;
const CANDLE_BUCKETS_MS = CANDLE_INTERVALS.map((interval) => INTERVAL_MS[interval]);

describe("candlesWarmAWindow", () => {
  it.each([
    {
      name: "shipped rules (10 s, 1 min) on 1min candles: 60 s is not longer than 60 s",
      windowsMs: [10 * S, MIN],
      retainMs: MIN,
      bucketMs: MIN,
      warms: false,
    },
    {
      name: "shipped rules on 10s candles",
      windowsMs: [10 * S, MIN],
      retainMs: MIN,
      bucketMs: 10 * S,
      warms: true,
    },
    {
      name: "a 5 min window on 1min candles (tolerance 30 s: half of each minute)",
      windowsMs: [5 * MIN],
      retainMs: 5 * MIN,
      bucketMs: MIN,
      warms: true,
    },
    {
      name: "a 61 s window on 1min candles",
      windowsMs: [61 * S],
      retainMs: 61 * S,
      bucketMs: MIN,
      warms: true,
    },
    // tolerance 12 min < 15 min: closes serve it about 80 % of the time
    {
      name: "a 2 h window on 15min candles",
      windowsMs: [2 * H],
      retainMs: 2 * H,
      bucketMs: 15 * MIN,
      warms: true,
    },
    { name: "a 9 h window on 1h candles", windowsMs: [9 * H], retainMs: 9 * H, bucketMs: H, warms: true },
    { name: "a 1 h window on 1h candles", windowsMs: [H], retainMs: H, bucketMs: H, warms: false },
    {
      name: "a 1 h window next to short ones",
      windowsMs: [10 * S, MIN, H],
      retainMs: H,
      bucketMs: MIN,
      warms: true,
    },
    { name: "no window", windowsMs: [], retainMs: H, bucketMs: MIN, warms: false },
    // a 1 d rule that leaves the target out still sizes its history: points ≥ 84.5 s apart, so 1min closes are
    // kept 2 min apart; a 10 min window is served about 70 % of the time, a 2 min one at most 2 min
    {
      name: "10 min on a history thinned by a 1 d retention",
      windowsMs: [10 * S, 10 * MIN],
      retainMs: D,
      bucketMs: MIN,
      warms: true,
    },
    {
      name: "2 min on a history thinned by a 1 d retention",
      windowsMs: [2 * MIN],
      retainMs: D,
      bucketMs: MIN,
      warms: false,
    },
  ])("$name: $warms", ({ windowsMs, retainMs, bucketMs, warms }) => {
    expect(candlesWarmAWindow(windowsMs, retainMs, bucketMs)).toBe(warms);
  });

  it("measures the kept spacing as a history keeps closes (1 d retention: 1min closes 2 min apart)", () => {
    expect(keptCloseSpacingMs(D, MIN)).toBe(2 * MIN);
    expect(minGapMs(closesOver(D, MIN))).toBe(2 * MIN);
  });

  it("served partly: the 15min / 2 h and 1min / 5 min windows get a verdict at some starts and not at others", () => {
    for (const { windowMs, bucketMs } of [
      { windowMs: 2 * H, bucketMs: 15 * MIN },
      { windowMs: 5 * MIN, bucketMs: MIN },
    ]) {
      const served = servedShare(closesOver(windowMs, bucketMs), windowMs, bucketMs);
      expect(served).toBeGreaterThan(0.4);
      expect(served).toBeLessThan(1);
      expect(candlesWarmAWindow([windowMs], windowMs, bucketMs)).toBe(true);
    }
  });

  it("warms exactly when some window is longer than the spacing between the closes a history really keeps", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CANDLE_BUCKETS_MS),
        fc.array(fc.integer({ min: 1, max: 2 * 86_400 }), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 0, max: 2 * 86_400 }),
        (bucketMs, windowsS, extraS) => {
          const windowsMs = windowsS.map((s) => s * S);
          const retainMs = Math.max(...windowsMs) + extraS * S;
          const keptMs = minGapMs(closesOver(retainMs, bucketMs));
          expect(keptCloseSpacingMs(retainMs, bucketMs)).toBe(keptMs);
          expect(candlesWarmAWindow(windowsMs, retainMs, bucketMs)).toBe(windowsMs.some((w) => w > keptMs));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("a skipped window is no longer than a kept spacing, and its own polls serve it from a window after they start", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CANDLE_BUCKETS_MS.filter((bucketMs) => bucketMs <= H)),
        fc.integer({ min: 1, max: 3_600 }),
        fc.integer({ min: 0, max: 2 * 86_400 }),
        (bucketMs, windowS, extraS) => {
          const windowMs = windowS * S;
          const retainMs = windowMs + extraS * S;
          fc.pre(!candlesWarmAWindow([windowMs], retainMs, bucketMs));
          const spacingMs = keptCloseSpacingMs(retainMs, bucketMs);
          // so candles could lend it verdicts only in its first window, at most one spacing of them
          expect(windowMs).toBeLessThanOrEqual(spacingMs);
          // a skipped target's history: its own polls, a second apart, judged at each from a window after the start
          // to a spacing later
          const history = new PriceHistory(retainMs);
          for (let nowMs = T0; nowMs <= T0 + windowMs + spacingMs; nowMs += S) {
            history.push(nowMs, p("100"));
            if (nowMs >= T0 + windowMs)
              expect(windowReferenceIndex(history, nowMs, windowMs)).toBeGreaterThanOrEqual(0);
          }
        },
      ),
      { numRuns: 40 },
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
          if (!candlesWarmAWindow(windowsMs, retainMs, bucketMs)) return;
          expect(candlesWarmAWindow(longer, retainMs, bucketMs)).toBe(true);
          expect(candlesWarmAWindow([...windowsMs, otherS * S], retainMs, bucketMs)).toBe(true);
          for (const shorterMs of CANDLE_BUCKETS_MS.slice(0, bucketIndex))
            expect(candlesWarmAWindow(windowsMs, retainMs, shorterMs)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});

/** The least time between two points of a history. */
function minGapMs(history: PriceHistory): number {
  let gapMs = Infinity;
  for (let i = 1; i < history.size; i++) gapMs = Math.min(gapMs, history.timeAt(i) - history.timeAt(i - 1));
  return gapMs;
}

/** The share of one close spacing's start times (a second apart) at which closes alone give a `windowMs` verdict. */
function servedShare(history: PriceHistory, windowMs: number, bucketMs: number): number {
  const lastMs = history.timeAt(history.size - 1);
  let served = 0;
  for (let offsetMs = 0; offsetMs < bucketMs; offsetMs += S)
    if (windowReferenceIndex(history, lastMs + offsetMs, windowMs) >= 0) served++;
  return served / (bucketMs / S);
}

/** A history retaining `retainMs`, fed a close a bucket apart over more than its retention, oldest first. */
function closesOver(retainMs: number, bucketMs: number): PriceHistory {
  const history = new PriceHistory(retainMs);
  const closes = Math.ceil(retainMs / bucketMs) + 3;
  const lastMs = Math.floor(T0 / bucketMs) * bucketMs;
  for (let i = closes - 1; i >= 0; i--) history.push(lastMs - i * bucketMs, p("100"));
  return history;
}
