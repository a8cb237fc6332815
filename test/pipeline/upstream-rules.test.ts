// The daemon's requests follow the live server's rules: twap without components, warm-up from spot median candles only.
import { describe, expect, it } from "vitest";
import type { TargetSpec } from "../../src/domain/types.js";
import { targetFetcher } from "../../src/pipeline/targets.js";
import { candlesToHistory, canWarmUp, warmUpHistory } from "../../src/pipeline/warmup.js";
import { decodeCandleSeriesBody } from "../../src/upstream/candlestick.js";
import type {
  CandleCallOptions,
  CandlestickQuery,
  PairPriceQuery,
  PragmaClient,
} from "../../src/upstream/types.js";

type Offchain = Extract<TargetSpec, { kind: "offchain" }>;
const spec = (fields: Partial<Offchain>): Offchain => ({
  kind: "offchain",
  id: "t",
  pair: "BTC/USD",
  entryType: "spot",
  aggregation: "median",
  interval: "1s",
  expiry: null,
  ...fields,
});

/** A client recording the queries of pair-price and candlestick calls (answers are never read). */
function recordingClient() {
  const pairPrice: PairPriceQuery[] = [];
  const candles: CandlestickQuery[] = [];
  const candleOptions: (CandleCallOptions | undefined)[] = [];
  const unused = (): never => {
    throw new Error("not used");
  };
  const client: PragmaClient = {
    getPairPrice: (query) => {
      pairPrice.push(query);
      return Promise.reject(new Error("unanswered"));
    },
    getCandlesticks: (query, options) => {
      candles.push(query);
      candleOptions.push(options);
      return Promise.resolve({ pairId: query.pair, candles: [] });
    },
    getFundingRates: unused,
    iterateFundingRates: unused,
    getOnchainEntry: unused,
    getOnchainPublishers: unused,
    getVault: unused,
  };
  return { client, pairPrice, candles, candleOptions };
}

describe("requests of off-chain targets", () => {
  it.each([
    { aggregation: "median", interval: "1s", withComponents: true },
    { aggregation: "twap", interval: "1h", withComponents: false },
  ] as const)(
    "$aggregation asks for components: $withComponents",
    async ({ aggregation, interval, withComponents }) => {
      const { client, pairPrice } = recordingClient();
      await targetFetcher(client, spec({ aggregation, interval }))(new AbortController().signal, 0).catch(
        () => null,
      );
      expect(pairPrice).toHaveLength(1);
      expect(pairPrice[0]).toMatchObject({ aggregation, interval, withComponents });
    },
  );

  it.each([
    { entryType: "spot", aggregation: "median", warmed: true },
    { entryType: "perp", aggregation: "median", warmed: false },
    { entryType: "future", aggregation: "median", warmed: false },
    { entryType: "spot", aggregation: "twap", warmed: false },
  ] as const)(
    "$entryType $aggregation is warmed from candles: $warmed",
    ({ entryType, aggregation, warmed }) => {
      expect(canWarmUp(spec({ entryType, aggregation }))).toBe(warmed);
    },
  );

  it("warms from spot candles of the configured candle interval, decoded back to the look-back's first bucket", async () => {
    const { client, candles, candleOptions } = recordingClient();
    await warmUpHistory(client, spec({}), "15min", 3_600_000, 0);
    // a close is at its bucket's end: the bucket starting a look-back and an interval before now closes in it
    expect(candleOptions).toEqual([{ sinceMs: -3_600_000 - 900_000 }]);
    expect(candles).toEqual([
      {
        pair: "BTC/USD",
        entryType: "spot",
        aggregation: "median",
        interval: "15min",
        routing: true,
        withComponents: false,
      },
    ]);
  });
});

describe("warm-up history from a bounded decode", () => {
  const MINUTE_MS = 60_000;
  const T0_MS = Date.UTC(2026, 10, 27, 12, 0, 0);
  /** A newest-first 1min candle body of `count` candles from T0 back, each close its own. */
  const body = (count: number): string =>
    JSON.stringify({
      pair_id: "BTC/USD",
      data: Array.from({ length: count }, (_, i) => {
        const price = String(80_000n * 10n ** 18n + BigInt(i));
        const time = new Date(T0_MS - i * MINUTE_MS).toISOString().slice(0, 19);
        return { time, open: price, high: price, low: price, close: price };
      }),
    });

  it.each([0, 1, 29_999, 59_999, 60_000])(
    "keeps the points of the full decode, as of T0 + %i ms",
    async (offsetMs) => {
      const text = body(2_000);
      const asOfMs = T0_MS + offsetMs;
      const client = {
        getCandlesticks: (_query: CandlestickQuery, options?: CandleCallOptions) =>
          Promise.resolve(decodeCandleSeriesBody(text, undefined, options?.sinceMs)),
      } as unknown as PragmaClient; // only getCandlesticks is called
      const points = await warmUpHistory(client, spec({}), "1min", 3_600_000, asOfMs);
      const expected = candlesToHistory(decodeCandleSeriesBody(text), "1min", 3_600_000, asOfMs);
      expect(points).toEqual(expected);
      expect(points.length).toBeGreaterThanOrEqual(60);
    },
  );
});
