// The daemon's requests follow the live server's rules: twap without components, warm-up from spot median candles only.
import { describe, expect, it } from "vitest";
import type { TargetSpec } from "../../src/domain/types.js";
import { targetFetcher } from "../../src/pipeline/targets.js";
import { canWarmUp, warmUpHistory } from "../../src/pipeline/warmup.js";
import type { CandlestickQuery, PairPriceQuery, PragmaClient } from "../../src/upstream/types.js";

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
  const unused = (): never => {
    throw new Error("not used");
  };
  const client: PragmaClient = {
    getPairPrice: (query) => {
      pairPrice.push(query);
      return Promise.reject(new Error("unanswered"));
    },
    getCandlesticks: (query) => {
      candles.push(query);
      return Promise.resolve({ pairId: query.pair, candles: [] });
    },
    getFundingRates: unused,
    iterateFundingRates: unused,
    getOnchainEntry: unused,
    getOnchainPublishers: unused,
    getVault: unused,
  };
  return { client, pairPrice, candles };
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

  it("warms from spot candles of the configured candle interval", async () => {
    const { client, candles } = recordingClient();
    await warmUpHistory(client, spec({}), "15min", 3_600_000, 0);
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
