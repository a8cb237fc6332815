// Pair price, candlestick and funding-rate endpoints of the simulator over real HTTP: shapes, parameters, errors.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  WireCandleSeries,
  WireEntryError,
  WireFundingRatePage,
  WirePairPrice,
} from "../../src/upstream/wire.js";
import { getJson, raw, startTestSim, T0_MS, type TestSim } from "./helpers.js";
import {
  candlestickResponse,
  fundingRatesResponse,
  pairPriceResponse,
  responseErrors,
} from "../fixtures/response-schemas.js";

let t: TestSim;
beforeAll(async () => {
  t = await startTestSim();
  t.clock.advance(3_600_000); // an hour after start, so history and windows are well populated
});
afterAll(() => t.sim.close());

const hexToNumber = (hex: string, decimals: number): number => Number(BigInt(hex)) / 10 ** decimals;

describe("GET /node/v1/data/{base}/{quote}", () => {
  it("returns the live server's shape: 18 decimals, 0x hex, ms timestamp, components null by default", async () => {
    const { status, body } = await getJson<WirePairPrice>(
      t.sim,
      "/node/v1/data/BTC/USD?interval=1s&aggregation=median",
    );
    expect(status).toBe(200);
    expect(responseErrors(pairPriceResponse, body)).toEqual([]);
    expect(Object.keys(body)).toEqual([
      "num_sources_aggregated",
      "pair_id",
      "price",
      "timestamp",
      "decimals",
      "components",
    ]);
    expect(body).toMatchObject({
      pair_id: "BTC/USD",
      decimals: 18,
      components: null,
      num_sources_aggregated: 6,
    });
    expect(body.price).toMatch(/^0x[0-9a-f]+$/);
    expect(hexToNumber(body.price, 18)).toBeGreaterThan(50_000);
    expect(body.timestamp).toBeGreaterThan(t.clock.nowMs() - 5_000); // ms, within the source cadence
    expect(body.timestamp).toBeLessThanOrEqual(t.clock.nowMs());
  });

  it("includes per-source components (ms timestamps) with with_components=true, median of them as price", async () => {
    const { body } = await getJson<WirePairPrice>(
      t.sim,
      "/node/v1/data/ETH/USD?with_components=true&interval=1s",
    );
    expect(responseErrors(pairPriceResponse, body)).toEqual([]);
    const components = body.components ?? [];
    expect(components.map((c) => c.source)).toEqual([
      "BINANCE",
      "BYBIT",
      "COINBASE",
      "OKX",
      "KUCOIN",
      "GATEIO",
      "BITSTAMP",
    ]);
    expect(body.num_sources_aggregated).toBe(components.length);
    const prices = components.map((c) => BigInt(c.price)).sort((a, b) => (a < b ? -1 : 1));
    const mid = prices[3]!;
    expect(Number(((BigInt(body.price) - mid) * 1_000_000n) / mid)).toBe(0); // median within rounding
    for (const c of components) expect(c.timestamp).toBeGreaterThan(1e12);
    expect(body.timestamp).toBe(Math.max(...components.map((c) => c.timestamp)));
  });

  it("aggregates every pair of the catalog with realistic magnitudes", async () => {
    const expected: Record<string, [number, number]> = {
      "BTC/USD": [40_000, 150_000],
      "ETH/USD": [1_000, 4_000],
      "SOL/USD": [50, 300],
      "STRK/USD": [0.05, 0.5],
      "USDC/USD": [0.98, 1.02],
      "USDT/USD": [0.98, 1.02],
      "EUR/USD": [0.9, 1.3],
      "XAU/USD": [2_000, 4_000],
    };
    for (const [pair, [low, high]] of Object.entries(expected)) {
      const { status, body } = await getJson<WirePairPrice>(t.sim, `/node/v1/data/${pair}?interval=1s`);
      expect(status).toBe(200);
      const price = hexToNumber(body.price, 18);
      expect(price, pair).toBeGreaterThan(low);
      expect(price, pair).toBeLessThan(high);
    }
  });

  it("upper-cases symbols", async () => {
    const { status, body } = await getJson<WirePairPrice>(t.sim, "/node/v1/data/btc/usd?interval=1s");
    expect(status).toBe(200);
    expect(body.pair_id).toBe("BTC/USD");
  });

  it("computes twap over the interval, close to but not equal to the median", async () => {
    const median = (await getJson<WirePairPrice>(t.sim, "/node/v1/data/BTC/USD?interval=1s")).body;
    const twap = (await getJson<WirePairPrice>(t.sim, "/node/v1/data/BTC/USD?aggregation=twap&interval=1h"))
      .body;
    expect(twap.price).not.toBe(median.price);
    expect(Math.abs(hexToNumber(twap.price, 18) / hexToNumber(median.price, 18) - 1)).toBeLessThan(0.05);
  });

  it("serves perp and future entries; future needs an expiry", async () => {
    const spot = hexToNumber(
      (await getJson<WirePairPrice>(t.sim, "/node/v1/data/BTC/USD?interval=1s")).body.price,
      18,
    );
    const perp = await getJson<WirePairPrice>(t.sim, "/node/v1/data/BTC/USD?interval=1s&entry_type=perp");
    expect(perp.status).toBe(200);
    expect(Math.abs(hexToNumber(perp.body.price, 18) / spot - 1)).toBeLessThan(0.01);
    const future = await getJson<WirePairPrice>(
      t.sim,
      "/node/v1/data/BTC/USD?interval=1s&entry_type=future&expiry=2027-11-22",
    );
    expect(future.status).toBe(200);
    expect(hexToNumber(future.body.price, 18) / spot).toBeGreaterThan(1.03); // one year of 5 % carry
    const missing = await getJson<WireEntryError>(t.sim, "/node/v1/data/BTC/USD?entry_type=future");
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/^Invalid expiry/);
    const expired = await raw(t.sim, "/node/v1/data/BTC/USD?entry_type=future&expiry=2020-01-01");
    expect(expired.status).toBe(404);
    expect((await raw(t.sim, "/node/v1/data/USDC/USD?entry_type=perp")).status).toBe(404);
  });

  it("routes through USD when the direct pair is missing, and refuses with routing=false", async () => {
    const btc = hexToNumber(
      (await getJson<WirePairPrice>(t.sim, "/node/v1/data/BTC/USD?interval=1s")).body.price,
      18,
    );
    const eur = hexToNumber(
      (await getJson<WirePairPrice>(t.sim, "/node/v1/data/EUR/USD?interval=1s")).body.price,
      18,
    );
    const routed = await getJson<WirePairPrice>(
      t.sim,
      "/node/v1/data/BTC/EUR?interval=1s&with_components=true",
    );
    expect(routed.status).toBe(200);
    expect(routed.body.pair_id).toBe("BTC/EUR");
    expect(hexToNumber(routed.body.price, 18)).toBeCloseTo(btc / eur, 0);
    expect(routed.body.components?.map((c) => c.source)).toEqual(["COINBASE"]);
    const inverse = await getJson<WirePairPrice>(t.sim, "/node/v1/data/USD/BTC?interval=1s");
    expect(hexToNumber(inverse.body.price, 18)).toBeCloseTo(1 / btc, 8);
    const refused = await getJson<WireEntryError>(t.sim, "/node/v1/data/BTC/EUR?routing=false");
    expect(refused.status).toBe(404);
    expect(refused.body.message).toBe("Entry not found: BTC/EUR");
  });

  it("looks up history by timestamp (first update at or before it) and rejects the future", async () => {
    const atS = Math.floor((T0_MS + 600_000) / 1000);
    const past = await getJson<WirePairPrice>(
      t.sim,
      `/node/v1/data/BTC/USD?interval=1s&timestamp=${atS}&with_components=true`,
    );
    expect(past.status).toBe(200);
    expect(past.body.timestamp).toBeLessThanOrEqual(atS * 1000);
    for (const c of past.body.components ?? []) expect(c.timestamp).toBeLessThanOrEqual(atS * 1000);
    const again = await raw(t.sim, `/node/v1/data/BTC/USD?interval=1s&timestamp=${atS}&with_components=true`);
    expect(JSON.parse(again.text)).toEqual(past.body);
    const future = await getJson<WireEntryError>(
      t.sim,
      `/node/v1/data/BTC/USD?timestamp=${Math.floor(t.clock.nowMs() / 1000) + 60}`,
    );
    expect(future.status).toBe(400);
    expect(future.body).toMatchObject({
      resource: "EntryModel",
      message: "Invalid timestamp: Timestamp range error: End timestamp is in the future",
    });
    expect(future.body.happened_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    const tooOld = await raw(t.sim, "/node/v1/data/BTC/USD?interval=1s&timestamp=1000000000");
    expect(tooOld.status).toBe(404);
  });

  it("404s an unknown pair with the spec's JSON body and the live server's texts", async () => {
    const { status, body, text } = await getJson<WireEntryError>(t.sim, "/node/v1/data/FOO/USD");
    expect(status).toBe(404);
    expect(Object.keys(body)).toEqual(["resource", "message", "happened_at"]);
    // routing is on by default (spec): the lookup through intermediate pairs is what failed
    expect(body.message).toBe("Missing data for routing on pair: FOO/USD");
    expect(text).not.toContain("\n");
    const direct = await getJson<WireEntryError>(t.sim, "/node/v1/data/FOO/USD?routing=false");
    expect(direct.body.message).toBe("Entry not found: FOO/USD");
  });

  it.each([
    ["aggregation=mean", "aggregation: unknown variant `mean`, expected `median` or `twap`"],
    ["interval=3min", "interval: unknown variant `3min`"],
    ["entry_type=option", "entry_type: unknown variant `option`"],
    ["routing=yes", "routing: provided string was not `true` or `false`"],
    ["with_components=1", "with_components: provided string was not `true` or `false`"],
    ["timestamp=abc", "timestamp: invalid digit found in string"],
  ])("rejects %s with a plain-text 400", async (query, detail) => {
    const response = await raw(t.sim, `/node/v1/data/BTC/USD?${query}`);
    expect(response.status).toBe(400);
    expect(response.headers["content-type"]).toMatch(/^text\/plain/);
    expect(response.text).toContain(`Failed to deserialize query string: ${detail}`);
  });

  it("rejects the intervals upstream does not support per aggregation, as JSON 400", async () => {
    for (const [query, message] of [
      ["aggregation=median&interval=5min", "Unsupported interval FiveMinutes for aggregation Median"],
      ["aggregation=twap&interval=1s", "Unsupported interval OneSecond for aggregation Twap"],
      ["aggregation=twap&interval=10s", "Unsupported interval TenSeconds for aggregation Twap"],
      ["aggregation=twap&interval=1w", "Unsupported interval OneWeek for aggregation Twap"],
    ] as const) {
      const { status, body } = await getJson<WireEntryError>(t.sim, `/node/v1/data/BTC/USD?${query}`);
      expect(status).toBe(400);
      expect(body.message).toBe(message);
    }
  });

  it("answers non-letter symbols with a JSON 500 and unknown paths with 404", async () => {
    const bad = await getJson<WireEntryError>(t.sim, "/node/v1/data/BTC1/USD");
    expect(bad.status).toBe(500);
    expect(bad.body.resource).toBe("EntryModel");
    const unknown = await raw(t.sim, "/node/v1/nope");
    expect(unknown.status).toBe(404);
    expect(unknown.text).toBe("The requested resource was not found");
    expect((await raw(t.sim, "/node/v1/data/BTC")).status).toBe(404);
    expect((await raw(t.sim, "/node/v1/data/BTC/USD", { method: "POST", body: "{}" })).status).toBe(405);
  });
});

describe("GET /node/v1/aggregation/candlestick/{base}/{quote}", () => {
  it("returns candles of the interval, newest first, 18-decimal digit strings, zone-less ISO times", async () => {
    const { status, body } = await getJson<WireCandleSeries>(
      t.sim,
      "/node/v1/aggregation/candlestick/BTC/USD?interval=15min",
    );
    expect(status).toBe(200);
    expect(responseErrors(candlestickResponse, body)).toEqual([]);
    // 15 days of history at 15 min (the simulator's default), newest first; the live limit is 10 000
    expect(body.data.length).toBe(15 * 96 + 5);
    const first = body.data[0]!;
    expect(Object.keys(first)).toEqual(["time", "open", "low", "high", "close"]);
    expect(first.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(first.time).toBe("2026-11-22T11:00:00");
    expect(body.data[1]!.time).toBe("2026-11-22T10:45:00");
    for (const candle of body.data) {
      expect(BigInt(candle.low) <= BigInt(candle.open) && BigInt(candle.open) <= BigInt(candle.high)).toBe(
        true,
      );
      expect(BigInt(candle.low) <= BigInt(candle.close) && BigInt(candle.close) <= BigInt(candle.high)).toBe(
        true,
      );
      expect(candle.open.length).toBeGreaterThan(18);
    }
    // buckets chain: each candle opens where the previous (older) one closed
    expect(body.data[1]!.close).toBe(body.data[0]!.open);
  });

  it("honours timestamp and validation like the pair price endpoint; no routing, empty when no candles", async () => {
    const atS = Math.floor((T0_MS + 1_800_000) / 1000);
    const past = await getJson<WireCandleSeries>(
      t.sim,
      `/node/v1/aggregation/candlestick/BTC/USD?interval=1min&timestamp=${atS}`,
    );
    expect(past.body.data[0]!.time).toBe("2026-11-22T10:30:00");
    expect(past.body.data.length).toBe(10_000);
    // as live: candles are read for the pair itself, so a cross pair or an unknown one is 200 with []
    for (const pair of ["ETH/BTC", "NOPE/USD"]) {
      const empty = await getJson<WireCandleSeries>(
        t.sim,
        `/node/v1/aggregation/candlestick/${pair}?interval=1h`,
      );
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({ pair_id: pair, data: [] });
    }
    const beforeHistory = await getJson<WireCandleSeries>(
      t.sim,
      "/node/v1/aggregation/candlestick/BTC/USD?interval=1h&timestamp=1000000000",
    );
    expect(beforeHistory.body.data).toEqual([]);
    expect((await raw(t.sim, "/node/v1/aggregation/candlestick/BTC/USD?interval=2min")).status).toBe(400);
    const future = await raw(t.sim, `/node/v1/aggregation/candlestick/BTC/USD?timestamp=${atS + 86_400}`);
    expect(future.status).toBe(400);
  });
});

describe("GET /node/v1/funding_rates/history/{base}/{quote}", () => {
  const base = "/node/v1/funding_rates/history/BTC/USD";

  it("pages hourly rates in range (seconds), default page_size 1000, oldest first", async () => {
    const startS = Math.floor(T0_MS / 1000) - 86_400;
    const endS = Math.floor(T0_MS / 1000);
    const { status, body } = await getJson<WireFundingRatePage>(
      t.sim,
      `${base}?source=HYPERLIQUID&timestamp=${startS},${endS}&frequency=Hour`,
    );
    expect(status).toBe(200);
    expect(responseErrors(fundingRatesResponse, body)).toEqual([]);
    expect(body).toMatchObject({ page: 1, page_size: 1000, has_next_page: false });
    expect(body.data.length).toBe(25);
    expect(body.data[0]).toMatchObject({
      pair: "BTC/USD",
      source: "HYPERLIQUID",
      timestamp_ms: startS * 1000,
    });
    for (const rate of body.data) expect(Math.abs(rate.hourly_rate)).toBeLessThan(1e-3);
  });

  it("paginates with page and page_size and reports has_next_page", async () => {
    const startS = Math.floor(T0_MS / 1000) - 3_600;
    const endS = Math.floor(T0_MS / 1000);
    const url = (page: number): string =>
      `${base}?source=PARADEX&timestamp=${startS},${endS}&frequency=Minute&page=${page}&page_size=25`;
    const pages = await Promise.all(
      [1, 2, 3, 4].map((page) => getJson<WireFundingRatePage>(t.sim, url(page))),
    );
    expect(pages.map((p) => p.body.data.length)).toEqual([25, 25, 11, 0]);
    expect(pages.map((p) => p.body.has_next_page)).toEqual([true, true, false, false]);
    const times = pages.flatMap((p) => p.body.data.map((r) => r.timestamp_ms));
    expect(new Set(times).size).toBe(61);
    const all = await getJson<WireFundingRatePage>(
      t.sim,
      `${base}?source=PARADEX&timestamp=${startS},${endS}&frequency=All`,
    );
    expect(all.body.data.length).toBe(241);
  });

  it("validates source, range, frequency, page and page_size", async () => {
    const nowS = Math.floor(t.clock.nowMs() / 1000);
    expect((await raw(t.sim, base)).text).toBe("Failed to deserialize query string: missing field `source`");
    expect((await raw(t.sim, `${base}?source=HYPERLIQUID&frequency=hour`)).status).toBe(400);
    expect((await raw(t.sim, `${base}?source=HYPERLIQUID&timestamp=12`)).status).toBe(400);
    for (const size of [0, 1001]) {
      const response = await raw(t.sim, `${base}?source=HYPERLIQUID&page_size=${size}`);
      expect(response.status).toBe(400);
    }
    expect((await raw(t.sim, `${base}?source=HYPERLIQUID&page=0`)).status).toBe(400);
    const future = await getJson<WireEntryError>(
      t.sim,
      `${base}?source=HYPERLIQUID&timestamp=${nowS - 60},${nowS + 3600}`,
    );
    expect(future.status).toBe(400);
    expect(future.body.message).toMatch(
      /^Invalid timestamp: Timestamp range error:.*End timestamp is in the future$/,
    );
    expect((await raw(t.sim, `${base}?source=HYPERLIQUID&timestamp=${nowS},${nowS - 60}`)).status).toBe(400);
    const same = await getJson<WireEntryError>(
      t.sim,
      `${base}?source=HYPERLIQUID&timestamp=${nowS - 60},${nowS - 60}`,
    );
    expect(same.status).toBe(400);
    expect(same.body.message).toBe(
      "Invalid timestamp: Timestamp range error: Start timestamp equals end timestamp",
    );
  });

  it("answers as the live server where the spec is silent: source upper-cased, unknown pair or source empty", async () => {
    const startS = Math.floor(T0_MS / 1000) - 3_600;
    const range = `timestamp=${startS},${startS + 3_600}&frequency=Hour`;
    const lower = await getJson<WireFundingRatePage>(t.sim, `${base}?source=hyperliquid&${range}`);
    expect(lower.status).toBe(200);
    expect(lower.body.data.map((rate) => rate.source)).toEqual(["HYPERLIQUID", "HYPERLIQUID"]);
    for (const path of [
      `${base}?source=NOPE&${range}`,
      `/node/v1/funding_rates/history/USDC/USD?source=HYPERLIQUID&${range}`,
    ]) {
      const empty = await getJson<WireFundingRatePage>(t.sim, path);
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({ data: [], page: 1, page_size: 1000, has_next_page: false });
    }
  });

  it("defaults to the whole history when no range is given (page_size 1000 max per page)", async () => {
    const { body } = await getJson<WireFundingRatePage>(
      t.sim,
      `${base}?source=BYBIT&frequency=Hour&page_size=1000`,
    );
    expect(body.data.length).toBe(15 * 24 + 2);
    expect(body.has_next_page).toBe(false);
  });
});
