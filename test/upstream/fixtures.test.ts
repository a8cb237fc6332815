// Every upstream fixture (test/fixtures/upstream/) decodes through the public decoders, with units normalised.
import { describe, expect, it } from "vitest";
import {
  decodeCandleSeriesBody,
  decodeFundingRatePageBody,
  decodeOnchainEntrySetBody,
  decodeOnchainPublishersBody,
  decodePairPriceBody,
  decodeVault,
  parseUpstreamErrorBody,
} from "../../src/upstream/index.js";
import { VAULT_JSON, fixture } from "./helpers.js";

describe("spec fixtures", () => {
  it("decodes pair price with components (ms timestamps, 18-decimal hex)", () => {
    const price = decodePairPriceBody(fixture("data_btc_usd_median_1min_with_components.json"));
    expect(price.pairId).toBe("BTC/USD");
    expect(price.price.raw).toBe(0x1160fbea235f368f0000n);
    expect(price.price.decimals).toBe(18);
    expect(price.price.text).toBe("82069.27");
    expect(price.numSources).toBe(5);
    expect(price.timestampMs).toBe(1741594457412);
    expect(price.components).toHaveLength(5);
    expect(price.components[0]).toMatchObject({ source: "BINANCE", timestampMs: 1741594440000 });
    expect(price.components[0]!.price.raw).toBe(0x11611b474565def10000n);
  });

  it("decodes pair price with components: null as []", () => {
    const price = decodePairPriceBody(fixture("data_eth_usd_default.json"));
    expect(price.pairId).toBe("ETH/USD");
    expect(price.components).toEqual([]);
    expect(price.price.raw).toBe(0x6e450ed7c7ec070000n);
  });

  it("reads a seconds timestamp (spec) as seconds and an absent components field as []", () => {
    const body = JSON.parse(fixture("data_eth_usd_default.json")) as Record<string, unknown>;
    delete body["components"];
    body["timestamp"] = 1741594457;
    const price = decodePairPriceBody(JSON.stringify(body));
    expect(price.timestampMs).toBe(1741594457000);
    expect(price.components).toEqual([]);
  });

  it("decodes candles: decimal strings scaled by 18, zone-less ISO time as UTC", () => {
    const series = decodeCandleSeriesBody(fixture("candlestick_btc_usd_15min.json"));
    expect(series.pairId).toBe("BTC/USD");
    expect(series.candles).toHaveLength(4);
    const first = series.candles[0]!;
    expect(first.timeMs).toBe(Date.UTC(2025, 2, 10, 8, 0, 0));
    expect(first.open.text).toBe("82208.74902185");
    expect(first.high.raw).toBe(82311500000000000000000n);
    expect(first.close.decimals).toBe(18);
  });

  it("decodes a funding-rate page", () => {
    const page = decodeFundingRatePageBody(fixture("funding_rates_history_btc_usd_hyperliquid_hour.json"));
    expect(page).toMatchObject({ hasNextPage: false, page: 1, pageSize: 1000 });
    expect(page.rates).toHaveLength(6);
    expect(page.rates[0]).toEqual({
      pair: "BTC/USD",
      source: "HYPERLIQUID",
      timestampMs: 1741564800000,
      hourlyRate: 1.25e-5,
    });
  });

  it("decodes an on-chain entry set (seconds → ms, variations as fractions)", () => {
    const set = decodeOnchainEntrySetBody(fixture("onchain_btc_usd_mainnet.json"));
    expect(set.pairId).toBe("BTC/USD");
    expect(set.price.decimals).toBe(8);
    expect(set.price.raw).toBe(0x776d54b0980n);
    expect(set.decimalsKnown).toBe(true);
    expect(set.lastUpdatedMs).toBe(1741594338000);
    expect(set.numSources).toBe(6);
    expect(set.assetType).toBe("Crypto");
    expect(set.components).toHaveLength(6);
    expect(set.components[4]).toMatchObject({
      publisher: "PRAGMA",
      source: "COINBASE",
      timestampMs: 1741594325000,
    });
    expect(set.variations).toEqual({ "1h": -0.0012843, "1d": 0.0217395, "1w": -0.0583121 });
  });

  it("decodes on-chain variations null as {}, unknown keys dropped, decimals 0 as unknown", () => {
    const body = JSON.parse(fixture("onchain_btc_usd_mainnet.json")) as Record<string, unknown>;
    body["decimals"] = 0;
    body["variations"] = null;
    body["components"] = null;
    const set = decodeOnchainEntrySetBody(JSON.stringify(body));
    expect(set.decimalsKnown).toBe(false);
    expect(set.variations).toEqual({});
    expect(set.components).toEqual([]);
    body["variations"] = { "1h": 0.01, "3h": 5 };
    expect(decodeOnchainEntrySetBody(JSON.stringify(body)).variations).toEqual({ "1h": 0.01 });
  });

  it("decodes the publishers list", () => {
    const publishers = decodeOnchainPublishersBody(fixture("onchain_publishers_mainnet_spot.json"));
    expect(publishers.map((p) => p.publisher)).toEqual(["AVNU", "FOURLEAF", "PRAGMA"]);
    const pragma = publishers[2]!;
    expect(pragma).toMatchObject({ type: 1, nbFeeds: 2, lastUpdatedMs: 1741594325000, totalUpdates: 845120 });
    const usdc = publishers[0]!.feeds[2]!;
    expect(usdc).toMatchObject({ pairId: "USDC/USD", decimalsKnown: true, dailyUpdates: 557 });
    expect(usdc.price.text).toBe("0.99987");
  });

  it("parses the error fixtures as entry error bodies", () => {
    expect(parseUpstreamErrorBody(fixture("404_entry_not_found.json"))).toEqual({
      kind: "entry",
      resource: "EntryModel",
      message: "Entry not found: BTC/USD",
      happenedAt: "2025-03-10T08:27:29.324879945Z",
    });
    expect(parseUpstreamErrorBody(fixture("400_invalid_timestamp_end_in_future.json"))).toMatchObject({
      kind: "entry",
      message: "Invalid timestamp: Timestamp range error: End timestamp is in the future",
    });
  });

  it("decodes a vault, bare or in the {status:ok,data} envelope", () => {
    const bare = decodeVault(VAULT_JSON);
    expect(bare).toMatchObject({
      id: "pragma-usdc-vault",
      status: "live",
      mgmtFeeBps: 100,
      sharePrice: "1.0421",
    });
    expect(bare.withdrawConstraints.redeem24hThresholdPctOfAum).toBe(10);
    expect(bare.contract).toEqual({ address: "0x0123", abiVersion: "1" });
    expect(decodeVault({ status: "ok", data: VAULT_JSON })).toEqual(bare);
  });
});
