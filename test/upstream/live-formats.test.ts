// The client over bodies in the live server's formats, one table per endpoint: the repository's fixtures and
// their null/absent-field variants, served over 127.0.0.1, decode with every field the monitor judges.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SkippedItem } from "../../src/upstream/index.js";
import type { PragmaClient } from "../../src/upstream/types.js";
import { createHarness, type Harness } from "./harness.js";
import { fixture, sendJson, startServer, type TestServer } from "./helpers.js";

let server: TestServer;
let harness: Harness;
let client: PragmaClient;
const skipped: SkippedItem[] = [];
/** Body served at the next request (each case sets it before calling the client). */
let body = "";

beforeAll(async () => {
  server = await startServer((_req, res) => sendJson(res, 200, body));
  harness = createHarness(server.url, { onSkippedItem: (item) => skipped.push(item) });
  client = harness.client;
});

afterAll(async () => {
  await harness.close();
  await server.close();
});

/** One body of one endpoint: what the client returns for it, and which list items it skipped. */
interface LiveCase {
  readonly name: string;
  /** A fixture file name, or the body text built from one. */
  readonly body: () => string;
  readonly call: (c: PragmaClient) => Promise<unknown>;
  readonly check: (value: unknown) => void;
  readonly skips?: readonly string[];
}

type Json = Record<string, unknown>;
const parsed = (name: string): Json => JSON.parse(fixture(name)) as Json;
const withEdit = (name: string, change: (b: Json) => void): (() => string) => {
  return () => {
    const b = parsed(name);
    change(b);
    return JSON.stringify(b);
  };
};

const pairPrice = (c: PragmaClient): Promise<unknown> =>
  c.getPairPrice({ pair: "BTC/USD", interval: "1s", aggregation: "median", withComponents: true });
const onchain = (c: PragmaClient): Promise<unknown> =>
  c.getOnchainEntry({ pair: "BTC/USD", network: "starknet-mainnet" });
const publishers = (c: PragmaClient): Promise<unknown> =>
  c.getOnchainPublishers({ network: "starknet-mainnet", publisherType: "Spot" });
const vault = (c: PragmaClient): Promise<unknown> => c.getVault("pragma-btc-vault");

const cases: Readonly<Record<string, readonly LiveCase[]>> = {
  pair_price: [
    {
      name: "ms timestamps, 18-decimal hex, components",
      body: () => fixture("data_btc_usd_median_1min_with_components.json"),
      call: pairPrice,
      check: (v) => expect(v).toMatchObject({ pairId: "BTC/USD", numSources: 5, timestampMs: 1741594457412 }),
    },
    {
      name: "components null",
      body: () => fixture("data_eth_usd_default.json"),
      call: pairPrice,
      check: (v) => expect(v).toMatchObject({ pairId: "ETH/USD", components: [] }),
    },
    {
      name: "one component with a null price",
      body: withEdit("data_btc_usd_median_1min_with_components.json", (b) => {
        (b["components"] as Json[])[1]!["price"] = null;
      }),
      call: pairPrice,
      check: (v) => expect((v as { components: unknown[] }).components).toHaveLength(4),
      skips: ["components[1].price"],
    },
  ],
  candlestick: [
    {
      name: "decimal OHLC, zone-less times",
      body: () => fixture("candlestick_btc_usd_15min.json"),
      call: (c) => c.getCandlesticks({ pair: "BTC/USD", interval: "15min" }),
      check: (v) => expect((v as { candles: unknown[] }).candles).toHaveLength(4),
    },
    {
      name: "empty data",
      body: () => JSON.stringify({ pair_id: "BTC/USD", data: [] }),
      call: (c) => c.getCandlesticks({ pair: "BTC/USD", interval: "1min" }),
      check: (v) => expect(v).toEqual({ pairId: "BTC/USD", candles: [] }),
    },
    {
      name: "one candle with a null close",
      body: withEdit("candlestick_btc_usd_15min.json", (b) => {
        (b["data"] as Json[])[2]!["close"] = null;
      }),
      call: (c) => c.getCandlesticks({ pair: "BTC/USD", interval: "15min" }),
      check: (v) => expect((v as { candles: unknown[] }).candles).toHaveLength(3),
      skips: ["data[2].close"],
    },
  ],
  funding_rates: [
    {
      name: "one page, hourly fractions",
      body: () => fixture("funding_rates_history_btc_usd_hyperliquid_hour.json"),
      call: (c) => c.getFundingRates({ pair: "BTC/USD", source: "HYPERLIQUID" }),
      check: (v) => expect((v as { rates: unknown[] }).rates).toHaveLength(6),
    },
    {
      name: "one rate null",
      body: withEdit("funding_rates_history_btc_usd_hyperliquid_hour.json", (b) => {
        (b["data"] as Json[])[0]!["hourly_rate"] = null;
      }),
      call: (c) => c.getFundingRates({ pair: "BTC/USD", source: "HYPERLIQUID" }),
      check: (v) => expect((v as { rates: unknown[] }).rates).toHaveLength(5),
      skips: ["data[0].hourly_rate"],
    },
  ],
  onchain: [
    {
      name: "seconds timestamps, variations",
      body: () => fixture("onchain_btc_usd_mainnet.json"),
      call: onchain,
      check: (v) => expect(v).toMatchObject({ decimalsKnown: true, numSources: 6 }),
    },
    {
      name: "decimals 0 and a null variation (the window is dropped, the rest kept)",
      body: () => fixture("onchain_btc_usd_mainnet_decimals0_null_variation.json"),
      call: onchain,
      check: (v) =>
        expect(v).toMatchObject({
          decimalsKnown: false,
          variations: { "1h": -0.0012843, "1w": -0.0583121 },
        }),
    },
    {
      name: "one component without tx_hash",
      body: withEdit("onchain_btc_usd_mainnet.json", (b) => {
        delete (b["components"] as Json[])[3]!["tx_hash"];
      }),
      call: onchain,
      check: (v) => expect((v as { components: unknown[] }).components).toHaveLength(5),
      skips: ["components[3].tx_hash"],
    },
  ],
  publishers: [
    {
      name: "the list",
      body: () => fixture("onchain_publishers_mainnet_spot.json"),
      call: publishers,
      check: (v) => expect((v as { publisher: string }[]).map((p) => p.publisher)).toHaveLength(3),
    },
    {
      name: "a publisher with last_updated_timestamp null (no component)",
      body: () => fixture("onchain_publishers_mainnet_spot_null_timestamp.json"),
      call: publishers,
      check: (v) => {
        const list = v as { publisher: string; lastUpdatedMs: number | null; feeds: unknown[] }[];
        expect(list.map((p) => p.publisher)).toEqual(["AVNU", "FOURLEAF", "KAIKO", "PRAGMA"]);
        expect(list[2]).toMatchObject({ lastUpdatedMs: null, feeds: [] });
        expect(list[3]!.lastUpdatedMs).toBe(1741594325000);
      },
    },
    {
      name: "a bad publisher and a bad feed of another",
      body: () => {
        const list = JSON.parse(fixture("onchain_publishers_mainnet_spot.json")) as Json[];
        list[0]!["type"] = "first-party";
        (list[2]!["components"] as Json[])[0]!["price"] = 1;
        return JSON.stringify(list);
      },
      call: publishers,
      check: (v) => {
        const list = v as { publisher: string; feeds: unknown[] }[];
        expect(list.map((p) => p.publisher)).toEqual(["FOURLEAF", "PRAGMA"]);
        expect(list[1]!.feeds).toHaveLength(1);
      },
      skips: ["[0].type", "[2].components[0].price"],
    },
  ],
  vault: [
    {
      name: "live envelope with absent and null optional fields, extra field, float threshold",
      body: () => fixture("vault_live_envelope.json"),
      call: vault,
      check: (v) =>
        expect(v).toMatchObject({
          id: "pragma-btc-vault",
          status: "live",
          tvl: "412.58321",
          sharePrice: "1.003817",
          description: null,
          mgmtFeeBps: null,
          contract: { abiVersion: null },
          depositConstraints: { maxDeposit: null, paused: false },
          withdrawConstraints: { instantSlippageMaxBps: null, redeem24hThresholdPctOfAum: 5.5 },
          icons: { light: null, dark: null },
        }),
    },
    {
      name: "bare live object: status active, paused null, empty withdraw constraints",
      body: () => fixture("vault_live_minimal.json"),
      call: vault,
      check: (v) =>
        expect(v).toMatchObject({
          id: "pragma-eth-vault",
          status: "live",
          depositConstraints: { minDeposit: "0.01", paused: null },
          withdrawConstraints: { instantLiquidity: null },
        }),
    },
    {
      name: "no deposit_constraints, withdraw_constraints or icons at all",
      body: withEdit("vault_live_minimal.json", (b) => {
        delete b["deposit_constraints"];
        b["withdraw_constraints"] = null;
        delete b["icons"];
      }),
      call: vault,
      check: (v) =>
        expect(v).toMatchObject({ depositConstraints: { paused: null }, icons: { light: null, dark: null } }),
    },
  ],
};

describe.each(Object.entries(cases))("%s in the live formats", (_endpoint, table) => {
  it.each(table)("$name", async ({ body: make, call, check, skips }) => {
    body = make();
    skipped.length = 0;
    check(await call(client));
    expect(skipped.map((item) => item.field)).toEqual(skips ?? []);
  });
});
