// Merging price points into a history: finer points win their time range over candles, one point a time, in order,
// and a handover's points no window can use are dropped; a move across a handover is judged against them.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createMonitorState,
  exportHistories,
  historyVersions,
  observe,
  type Observation,
} from "../../src/domain/monitor.js";
import { ScaledPrice } from "../../src/domain/price.js";
import { mergePricePoints, type PricePoint } from "../../src/domain/price-history.js";
import { oldestReferenceMs } from "../../src/domain/window-reference.js";
import { BTC_OFF, obs, p, pairPrice, rule, T0 } from "./helpers.js";

const S = 1_000;
const WINDOW_MS = 10 * S;
const pc10 = rule("price_change", { windowMs: WINDOW_MS, market: "offchain" }, { threshold: 0.05 });

const at = (atMs: number, raw = 1n): PricePoint => ({ atMs, price: new ScaledPrice(raw, 8) });
const times = (points: readonly PricePoint[]): number[] => points.map((point) => point.atMs);
const sortedUnique = (points: readonly number[]): number[] => [...new Set(points)].sort((a, b) => a - b);

/** Times within a minute of T0, finer (any ms) or on a candle's minute boundary. */
const anyTimes = fc.array(fc.integer({ min: T0 - 60 * S, max: T0 + 60 * S }), { maxLength: 40 });
const candleTimes = fc
  .array(fc.integer({ min: -3, max: 1 }), { maxLength: 5 })
  .map((minutes) => minutes.map((m) => T0 + m * 60 * S));

describe("mergePricePoints (property)", () => {
  it("is ordered, one point a time, keeps every held point, and drops coarse points inside the held range", () => {
    fc.assert(
      fc.property(anyTimes, anyTimes, fc.boolean(), (heldTimes, incomingTimes, coarse) => {
        const held = sortedUnique(heldTimes).map((t) => at(t, 1n));
        const incoming = [...incomingTimes.map((t) => at(t, 2n)), at(Number.NaN)];
        const merged = mergePricePoints(held, incoming, coarse);
        const mergedTimes = times(merged);
        expect(mergedTimes).toEqual(sortedUnique(mergedTimes));
        // a held point wins a tie with an incoming one
        for (const point of held) expect(merged.find((m) => m.atMs === point.atMs)?.price.raw).toBe(1n);
        const first = held[0]?.atMs ?? Infinity;
        const last = held.at(-1)?.atMs ?? -Infinity;
        const kept = incomingTimes.filter((t) => !coarse || t < first || t > last);
        expect(mergedTimes).toEqual(sortedUnique([...times(held), ...kept]));
      }),
    );
  });
});

const seed = (points: readonly PricePoint[]): Observation => ({
  kind: "history",
  target: BTC_OFF,
  points,
  source: "handover",
});
const candles = (points: readonly PricePoint[]): Observation => ({
  kind: "history",
  target: BTC_OFF,
  points,
  source: "candles",
});

describe("a handover's points, then candle warm-up, through the monitor", () => {
  it("leaves a history ordered, one point a time, the handover's points within the window, no candle inside their range (property)", () => {
    fc.assert(
      fc.property(anyTimes, candleTimes, (handoverTimes, candleAt) => {
        const state = createMonitorState();
        observe(state, seed(handoverTimes.map((t) => at(t, 1n))), [pc10], T0);
        observe(state, candles(candleAt.map((t) => at(t, 2n))), [pc10], T0);
        const history = state.targets.byId.get(BTC_OFF.id)?.history;
        if (history === undefined || history === null) throw new Error("no history kept");
        const held = times(history.points());
        expect(held).toEqual(sortedUnique(held));
        // candles keep their own rule (the one closest before the window start stays: a gap, not a verdict)
        const handedOver = history.points().filter((point) => point.price.raw === 1n);
        expect(handedOver.every((point) => point.atMs >= oldestReferenceMs(history, T0))).toBe(true);
        const seeded = handoverTimes.filter((t) => t >= oldestReferenceMs(history, T0));
        const inside = (t: number): boolean => t >= Math.min(...seeded) && t <= Math.max(...seeded);
        for (const point of history.points())
          if (point.price.raw === 2n)
            expect({ candle: point.atMs, inside: inside(point.atMs) }).toEqual({
              candle: point.atMs,
              inside: false,
            });
      }),
    );
  });

  it("judges the new owner's first poll against the old owner's prices: fires once on a 8 % move", () => {
    const state = createMonitorState();
    const old = Array.from({ length: 12 }, (_, i) => ({ atMs: T0 - 12 * S + i * S, price: p("100") }));
    observe(state, seed(old), [pc10], T0);
    const first = observe(state, obs.off(pairPrice("108", T0), T0), [pc10], T0).transitions;
    expect(first.map((a) => `${a.rule}/${a.status}/${a.reason}`)).toEqual(["price_change/firing/first"]);
    const next = observe(state, obs.off(pairPrice("108", T0 + S), T0 + S), [pc10], T0 + S).transitions;
    expect(next).toEqual([]);
  });

  it("gives no verdict from a handover record that sat longer than the window (its points are dropped)", () => {
    const state = createMonitorState();
    const stale = Array.from({ length: 12 }, (_, i) => ({ atMs: T0 - 60 * S + i * S, price: p("100") }));
    observe(state, seed(stale), [pc10], T0);
    expect(exportHistories(state, T0, [BTC_OFF.id]).size).toBe(0);
    expect(observe(state, obs.off(pairPrice("108", T0), T0), [pc10], T0).transitions).toEqual([]);
  });

  it("exports only the points a window can still use", () => {
    const state = createMonitorState();
    const points = Array.from({ length: 30 }, (_, i) => ({ atMs: T0 - 29 * S + i * S, price: p("100") }));
    observe(state, { kind: "history", target: BTC_OFF, points }, [pc10], T0);
    // the history keeps one point at or before now − 10 s; a point 12 s old (10 s window, 2 s tolerance) would be exported too
    expect(times(exportHistories(state, T0, [BTC_OFF.id]).get(BTC_OFF.id) ?? [])).toEqual(
      points.filter((point) => point.atMs >= T0 - 10 * S).map((point) => point.atMs),
    );
    expect(times(exportHistories(state, T0 + 2 * S + 1, [BTC_OFF.id]).get(BTC_OFF.id) ?? [])).toEqual(
      points.filter((point) => point.atMs >= T0 - 9 * S).map((point) => point.atMs),
    );
  });
});

describe("a history's token (historyVersions)", () => {
  const tokenOf = (state: ReturnType<typeof createMonitorState>): string | undefined =>
    historyVersions(state, [BTC_OFF.id], 0).get(BTC_OFF.id);
  /** BTC/USD polled at 100 at T0, T0 + 1 s and T0 + 2 s under a 10 s window. */
  function polled() {
    const state = createMonitorState();
    for (const atMs of [T0, T0 + S, T0 + 2 * S])
      observe(state, obs.off(pairPrice("100", atMs), atMs), [pc10], atMs);
    return state;
  }

  it("changes when a point in the middle is replaced, its count and ends the same", () => {
    const state = polled();
    const before = tokenOf(state);
    // 5 ms before the middle point, closer than the history keeps two apart: it takes that point's place
    const moved = { atMs: T0 + S - 5, price: p("101") };
    observe(
      state,
      { kind: "history", target: BTC_OFF, points: [moved], source: "handover" },
      [pc10],
      T0 + 2 * S,
    );
    const after = exportHistories(state, T0 + 2 * S, [BTC_OFF.id]).get(BTC_OFF.id) ?? [];
    expect(times(after)).toEqual([T0, T0 + S - 5, T0 + 2 * S]);
    expect(tokenOf(state)).not.toBe(before);
  });

  it("never repeats the token of a history its target had before (dropped with its rules, made again)", () => {
    const state = polled();
    const before = tokenOf(state);
    observe(state, obs.off(pairPrice("100", T0 + 3 * S), T0 + 3 * S), [], T0 + 3 * S); // no window: no history
    expect(tokenOf(state)).toBeUndefined();
    for (const atMs of [T0, T0 + S, T0 + 2 * S])
      observe(state, obs.off(pairPrice("100", atMs), atMs), [pc10], atMs);
    expect(tokenOf(state)).not.toBe(before);
  });

  it("stays the same while nothing is stored (a poll of the same timestamp again)", () => {
    const state = polled();
    const before = tokenOf(state);
    observe(state, obs.off(pairPrice("100", T0 + 2 * S), T0 + 3 * S), [pc10], T0 + 3 * S);
    expect(tokenOf(state)).toBe(before);
  });
});
