// The candle half of the history mode, without a server: four prices per candle in time order, and a fetch that
// names every pair it could not read and goes on with the others.
import { describe, expect, it } from "vitest";
import { candlePoint, POINTS_PER_CANDLE } from "../../src/backtest/candle-prices.js";
import { candleTickMs, fetchCandleHistory } from "../../src/backtest/history.js";
import { parseDecimalPrice, type ScaledPrice } from "../../src/domain/price.js";
import type { Candle } from "../../src/domain/types.js";

const T0 = Date.parse("2026-11-20T10:00:00.000Z");
const MINUTE_MS = 60_000;
const DAY = 86_400_000;

const price = (text: string): ScaledPrice => {
  const parsed = parseDecimalPrice(text, 18);
  if (parsed === null) throw new Error(`bad price ${text}`);
  return parsed;
};

/** A candle of prices given as decimal text. */
function candle(timeMs: number, open: string, high: string, low: string, close: string): Candle {
  return { timeMs, open: price(open), high: price(high), low: price(low), close: price(close) };
}

/** The candle's prices as [ms after its start, price text]. */
function points(c: Candle): [number, string][] {
  return Array.from({ length: POINTS_PER_CANDLE }, (_, i) => {
    const p = candlePoint("BTC/USD", c, MINUTE_MS, i);
    expect(p.price).toMatchObject({ pairId: "BTC/USD", timestampMs: p.atMs, numSources: 1, components: [] });
    return [p.atMs - c.timeMs, p.price.price.text];
  });
}

describe("candlePoint", () => {
  it("a rising candle: open, low, high, close; a falling one: open, high, low, close", () => {
    expect(points(candle(T0, "100", "110", "95", "105"))).toEqual([
      [0, "100"],
      [20_000, "95"],
      [40_000, "110"],
      [59_999, "105"],
    ]);
    expect(points(candle(T0, "100", "110", "95", "97"))).toEqual([
      [0, "100"],
      [20_000, "110"],
      [40_000, "95"],
      [59_999, "97"],
    ]);
  });

  it("ticks every twelfth of a candle, at least every second", () => {
    expect(candleTickMs(MINUTE_MS)).toBe(5_000);
    expect(candleTickMs(10_000)).toBe(1_000);
    expect(candleTickMs(3_600_000)).toBe(300_000);
  });
});

describe("fetchCandleHistory", () => {
  const range = { fromMs: T0, toMs: T0 + 2 * MINUTE_MS, candleMs: MINUTE_MS };
  const known = [candle(T0 + MINUTE_MS, "1", "1", "1", "1"), candle(T0, "1", "1", "1", "1")];

  it("reads each pair once, names a failed fetch and an unknown pair, and keeps the others", async () => {
    const asked: string[] = [];
    const history = await fetchCandleHistory(
      (pair) => {
        asked.push(pair);
        if (pair === "BAD/USD") return Promise.reject(new Error("HTTP 503"));
        return Promise.resolve(pair === "BTC/USD" ? known : []);
      },
      [{ pair: "BTC/USD" }, { pair: "ZZZ/USD" }, { pair: "BTC/USD" }, { pair: "BAD/USD" }],
      range,
    );
    expect([...history.candles.keys()]).toEqual(["BTC/USD"]);
    expect(history.candles.get("BTC/USD")?.map((c) => c.timeMs)).toEqual([T0, T0 + MINUTE_MS]);
    expect(history.problems.map((p) => p.message)).toEqual([
      "cannot fetch the candles of BAD/USD: HTTP 503",
      "the API has no candles of ZZZ/USD at all (an unknown pair?): its targets are skipped",
    ]);
    expect(asked.filter((pair) => pair === "BTC/USD")).toHaveLength(1);
  });

  it("a pair with candles outside the range only: no candles for the range, named with it", async () => {
    const history = await fetchCandleHistory(
      (_pair, atMs) => Promise.resolve(atMs > T0 + DAY ? [candle(T0 + 2 * DAY, "1", "1", "1", "1")] : []),
      [{ pair: "ETH/USD" }],
      range,
    );
    expect(history.problems.map((p) => p.message)).toEqual([
      "the API has no candles of ETH/USD for 2026-11-20T10:00:00.000Z → 2026-11-20T10:02:00.000Z: its targets are skipped",
    ]);
  });
});
