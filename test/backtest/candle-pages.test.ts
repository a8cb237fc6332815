// Reading a candle range page by page from the simulator's candlestick handler (10 000 candles a page, newest first).
import { describe, expect, it } from "vitest";
import { readCandleRange } from "../../src/backtest/candle-pages.js";
import { createManualClock } from "../../src/simulator/clock.js";
import { createMarket } from "../../src/simulator/market.js";
import { handleCandlestick } from "../../src/simulator/offchain-routes.js";
import { decodeCandleSeriesBody } from "../../src/upstream/candlestick.js";

const T0 = Date.parse("2026-11-20T10:00:00.000Z");
const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** A reader over the simulator's handler, counting the pages it serves. */
function simulatorReader(historyMs: number): {
  read: (atMs: number) => Promise<ReturnType<typeof decodeCandleSeriesBody>["candles"]>;
  pages: number[];
} {
  const market = createMarket(7, createManualClock(T0), { historyMs });
  const pages: number[] = [];
  return {
    pages,
    read: (atMs) => {
      const params = new Map([
        ["interval", "1min"],
        ["timestamp", String(Math.floor(atMs / 1000))],
      ]);
      const response = handleCandlestick(market, "BTC", "USD", params);
      expect(response.status).toBe(200);
      const { candles } = decodeCandleSeriesBody(response.body);
      pages.push(candles.length);
      return Promise.resolve(candles);
    },
  };
}

describe("readCandleRange", () => {
  it("pages back 12 days of 1min candles (two pages of at most 10 000), each once, oldest first", async () => {
    const { read, pages } = simulatorReader(30 * DAY_MS);
    const candles = await readCandleRange(read, T0 - 12 * DAY_MS, T0);
    expect(pages).toEqual([10_000, 10_000]);
    expect(candles).toHaveLength(12 * 1440 + 1);
    expect(candles[0]?.timeMs).toBe(T0 - 12 * DAY_MS);
    expect(candles.at(-1)?.timeMs).toBe(T0);
    candles.forEach((c, i) => i > 0 && expect(c.timeMs - (candles[i - 1]?.timeMs ?? 0)).toBe(MINUTE_MS));
  });

  it("stops at the start of the pair's history and gives nothing for a range before it", async () => {
    const { read, pages } = simulatorReader(DAY_MS);
    const candles = await readCandleRange(read, T0 - 3 * DAY_MS, T0);
    expect(candles[0]?.timeMs).toBe(T0 - DAY_MS);
    expect(pages.length).toBeLessThanOrEqual(2);
    expect(await readCandleRange(read, T0 - 5 * DAY_MS, T0 - 4 * DAY_MS)).toEqual([]);
  });
});
