// What goes on the wire: every parameter explicit with spec defaults, real names, headers; bad input sends nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPmError } from "../../src/domain/errors.js";
import type { PragmaClient } from "../../src/upstream/types.js";
import { USER_AGENT } from "../../src/version.js";
import { createHarness, type Harness } from "./harness.js";
import { VAULT_JSON, fixture, sendJson, startServer, type TestServer } from "./helpers.js";

let server: TestServer;
let harness: Harness;
let client: PragmaClient;

/** Serve a valid body for each endpoint, chosen by path. */
function bodyFor(url: string): string {
  if (url.startsWith("/vault/")) return JSON.stringify({ status: "ok", data: VAULT_JSON });
  if (url.startsWith("/node/v1/data/")) return fixture("data_btc_usd_median_1min_with_components.json");
  if (url.startsWith("/node/v1/aggregation/")) return fixture("candlestick_btc_usd_15min.json");
  if (url.startsWith("/node/v1/funding_rates/"))
    return fixture("funding_rates_history_btc_usd_hyperliquid_hour.json");
  if (url.startsWith("/node/v1/onchain/publishers")) return fixture("onchain_publishers_mainnet_spot.json");
  return fixture("onchain_btc_usd_mainnet.json");
}

beforeAll(async () => {
  server = await startServer((req, res) => sendJson(res, 200, bodyFor(req.url ?? "")));
  harness = createHarness(server.url, { apiKey: "secret-key" });
  client = harness.client;
});

afterAll(async () => {
  await harness.close();
  await server.close();
});

const wire: readonly { name: string; call: (c: PragmaClient) => Promise<unknown>; url: string }[] = [
  {
    name: "pair price defaults (lower-case pair)",
    call: (c) => c.getPairPrice({ pair: "btc/usd" }),
    url: "/node/v1/data/BTC/USD?interval=2h&routing=true&aggregation=median&entry_type=spot&with_components=false",
  },
  {
    name: "pair price, everything set",
    call: (c) =>
      c.getPairPrice({
        pair: "BTC/USD",
        timestampS: 1741594457,
        interval: "1min",
        routing: false,
        aggregation: "median",
        entryType: "future",
        expiry: "2025-12-26T08:00:00",
        withComponents: true,
      }),
    url: "/node/v1/data/BTC/USD?timestamp=1741594457&interval=1min&routing=false&aggregation=median&entry_type=future&expiry=2025-12-26T08%3A00%3A00&with_components=true",
  },
  {
    name: "pair price twap perp",
    call: (c) => c.getPairPrice({ pair: "ETH/USD", aggregation: "twap", entryType: "perp", interval: "1h" }),
    url: "/node/v1/data/ETH/USD?interval=1h&routing=true&aggregation=twap&entry_type=perp&with_components=false",
  },
  {
    name: "candlestick",
    call: (c) => c.getCandlesticks({ pair: "BTC/USD", interval: "15min" }),
    url: "/node/v1/aggregation/candlestick/BTC/USD?interval=15min&routing=true&aggregation=median&entry_type=spot&with_components=false",
  },
  {
    name: "funding defaults",
    call: (c) => c.getFundingRates({ pair: "BTC/USD", source: "HYPERLIQUID" }),
    url: "/node/v1/funding_rates/history/BTC/USD?source=HYPERLIQUID&frequency=All&page=1&page_size=1000",
  },
  {
    name: "funding with range",
    call: (c) =>
      c.getFundingRates({
        pair: "BTC/USD",
        source: "HYPERLIQUID",
        rangeS: { start: 1741564800, end: 1741582800 },
        frequency: "Hour",
        page: 2,
        pageSize: 50,
      }),
    url: "/node/v1/funding_rates/history/BTC/USD?source=HYPERLIQUID&timestamp=1741564800,1741582800&frequency=Hour&page=2&page_size=50",
  },
  {
    name: "onchain defaults",
    call: (c) => c.getOnchainEntry({ pair: "BTC/USD", network: "starknet-mainnet" }),
    url: "/node/v1/onchain/BTC/USD?network=starknet-mainnet&aggregation=median&routing=false&components=true&variations=true",
  },
  {
    name: "onchain everything set",
    call: (c) =>
      c.getOnchainEntry({
        pair: "BTC/USD",
        network: "starknet-sepolia",
        routing: true,
        timestampS: 1741594338,
        components: false,
        variations: false,
      }),
    url: "/node/v1/onchain/BTC/USD?network=starknet-sepolia&aggregation=median&routing=true&timestamp=1741594338&components=false&variations=false",
  },
  {
    name: "publishers",
    call: (c) => c.getOnchainPublishers({ network: "starknet-mainnet", publisherType: "Perp" }),
    url: "/node/v1/onchain/publishers?network=starknet-mainnet&data_type=Perp",
  },
  { name: "vault", call: (c) => c.getVault("pragma usdc/1"), url: "/vault/api/v1/vaults/pragma%20usdc%2F1" },
];

describe("request parameters", () => {
  it.each(wire)("$name", async ({ call, url }) => {
    const before = server.requests.length;
    await call(client);
    expect(server.requests.slice(before).map((r) => r.url)).toEqual([url]);
  });

  it("sends user agent, accept and the api key to /node/v1, but not the key to the vault host", async () => {
    await client.getPairPrice({ pair: "BTC/USD" });
    const node = server.requests.at(-1)!.headers;
    expect(node["user-agent"]).toBe(USER_AGENT);
    expect(USER_AGENT).toMatch(/^pragma-monitor\/\d+\.\d+\.\d+/);
    expect(node["accept"]).toBe("application/json");
    expect(node["x-api-key"]).toBe("secret-key");
    await client.getVault("v1");
    const vault = server.requests.at(-1)!.headers;
    expect(vault["user-agent"]).toBe(USER_AGENT);
    expect(vault["x-api-key"]).toBeUndefined();
  });
});

/** Cast for deliberately ill-typed input (what JS callers or bad config could pass). */
const bad = <T>(value: unknown): T => value as T;

const invalidInputs: readonly { name: string; call: (c: PragmaClient) => Promise<unknown>; field: string }[] =
  [
    { name: "pair without slash", call: (c) => c.getPairPrice({ pair: "BTCUSD" }), field: "pair" },
    { name: "pair with digits", call: (c) => c.getPairPrice({ pair: "BTC/US1" }), field: "pair" },
    { name: "pair with three legs", call: (c) => c.getCandlesticks({ pair: "BTC/USD/EUR" }), field: "pair" },
    {
      name: "empty pair",
      call: (c) => c.getOnchainEntry({ pair: "", network: "starknet-mainnet" }),
      field: "pair",
    },
    { name: "pair not a string", call: (c) => c.getPairPrice({ pair: bad(42) }), field: "pair" },
    {
      name: "aggregation mean",
      call: (c) => c.getPairPrice({ pair: "BTC/USD", aggregation: bad("mean") }),
      field: "aggregation",
    },
    {
      name: "unknown interval",
      call: (c) => c.getPairPrice({ pair: "BTC/USD", interval: bad("3min") }),
      field: "interval",
    },
    {
      name: "unknown entry type",
      call: (c) => c.getPairPrice({ pair: "BTC/USD", entryType: bad("option") }),
      field: "entryType",
    },
    {
      name: "routing not boolean",
      call: (c) => c.getPairPrice({ pair: "BTC/USD", routing: bad("true") }),
      field: "routing",
    },
    {
      name: "expiry without future",
      call: (c) => c.getPairPrice({ pair: "BTC/USD", expiry: "2025-12-26" }),
      field: "expiry",
    },
    {
      name: "malformed expiry",
      call: (c) => c.getPairPrice({ pair: "BTC/USD", entryType: "future", expiry: "soon" }),
      field: "expiry",
    },
    {
      name: "negative timestamp",
      call: (c) => c.getPairPrice({ pair: "BTC/USD", timestampS: -1 }),
      field: "timestampS",
    },
    {
      name: "fractional timestamp",
      call: (c) => c.getPairPrice({ pair: "BTC/USD", timestampS: 1.5 }),
      field: "timestampS",
    },
    {
      name: "NaN timestamp",
      call: (c) => c.getPairPrice({ pair: "BTC/USD", timestampS: Number.NaN }),
      field: "timestampS",
    },
    {
      name: "ms timestamp",
      call: (c) => c.getPairPrice({ pair: "BTC/USD", timestampS: 1741594457412 }),
      field: "timestampS",
    },
    {
      name: "historical twap",
      call: (c) => c.getPairPrice({ pair: "BTC/USD", timestampS: 1741594457, aggregation: "twap" }),
      field: "timestampS",
    },
    {
      name: "onchain historical twap",
      call: (c) =>
        c.getOnchainEntry({
          pair: "BTC/USD",
          network: "starknet-mainnet",
          timestampS: 1,
          aggregation: "twap",
        }),
      field: "timestampS",
    },
    {
      name: "page 0",
      call: (c) => c.getFundingRates({ pair: "BTC/USD", source: "BYBIT", page: 0 }),
      field: "page",
    },
    {
      name: "page fractional",
      call: (c) => c.getFundingRates({ pair: "BTC/USD", source: "BYBIT", page: 1.5 }),
      field: "page",
    },
    {
      name: "page_size 0",
      call: (c) => c.getFundingRates({ pair: "BTC/USD", source: "BYBIT", pageSize: 0 }),
      field: "pageSize",
    },
    {
      name: "page_size 1001",
      call: (c) => c.getFundingRates({ pair: "BTC/USD", source: "BYBIT", pageSize: 1001 }),
      field: "pageSize",
    },
    {
      name: "funding frequency lower case",
      call: (c) => c.getFundingRates({ pair: "BTC/USD", source: "BYBIT", frequency: bad("hour") }),
      field: "frequency",
    },
    {
      name: "funding empty source",
      call: (c) => c.getFundingRates({ pair: "BTC/USD", source: "" }),
      field: "source",
    },
    {
      name: "funding range start after end",
      call: (c) => c.getFundingRates({ pair: "BTC/USD", source: "BYBIT", rangeS: { start: 20, end: 10 } }),
      field: "rangeS",
    },
    {
      name: "funding range negative",
      call: (c) => c.getFundingRates({ pair: "BTC/USD", source: "BYBIT", rangeS: { start: -5, end: 10 } }),
      field: "rangeS.start",
    },
    // What the live server always refuses although the spec allows it (pragma-api-facts.md).
    ...(["1s", "5s", "10s", "1w"] as const).map((interval) => ({
      name: `twap with ${interval} (live: 400)`,
      call: (c: PragmaClient) => c.getPairPrice({ pair: "BTC/USD", aggregation: "twap", interval }),
      field: "interval",
    })),
    {
      name: "median with 5min (live: 400)",
      call: (c) => c.getPairPrice({ pair: "BTC/USD", aggregation: "median", interval: "5min" }),
      field: "interval",
    },
    {
      name: "twap with components (live: 500)",
      call: (c) =>
        c.getPairPrice({ pair: "BTC/USD", aggregation: "twap", interval: "1h", withComponents: true }),
      field: "withComponents",
    },
    {
      name: "expiry as a bare date (live: Invalid expiry)",
      call: (c) => c.getPairPrice({ pair: "BTC/USD", entryType: "future", expiry: "2025-12-26" }),
      field: "expiry",
    },
    {
      name: "expiry with a zone (live: Invalid expiry)",
      call: (c) => c.getPairPrice({ pair: "BTC/USD", entryType: "future", expiry: "2025-12-26T08:00:00Z" }),
      field: "expiry",
    },
    {
      name: "onchain twap (live: 500 every time)",
      call: (c) => c.getOnchainEntry({ pair: "BTC/USD", network: "starknet-mainnet", aggregation: "twap" }),
      field: "aggregation",
    },
    ...(["5min", "100ms", "1s", "5s", "2h", "1w"] as const).map((interval) => ({
      name: `${interval} candles (no such view live)`,
      call: (c: PragmaClient) => c.getCandlesticks({ pair: "BTC/USD", interval }),
      field: "interval",
    })),
    {
      name: "perp candles (spot only live)",
      call: (c) => c.getCandlesticks({ pair: "BTC/USD", interval: "1min", entryType: "perp" }),
      field: "entryType",
    },
    {
      name: "onchain unknown network",
      call: (c) => c.getOnchainEntry({ pair: "BTC/USD", network: bad("mainnet") }),
      field: "network",
    },
    {
      name: "onchain missing network",
      call: (c) => c.getOnchainEntry(bad({ pair: "BTC/USD" })),
      field: "network",
    },
    {
      name: "publishers lower-case type",
      call: (c) => c.getOnchainPublishers({ network: "starknet-mainnet", publisherType: bad("spot") }),
      field: "publisherType",
    },
    { name: "empty vault id", call: (c) => c.getVault(""), field: "vaultId" },
    { name: "blank vault id", call: (c) => c.getVault("  "), field: "vaultId" },
    { name: "zero timeout", call: (c) => c.getVault("v1", { timeoutMs: 0 }), field: "timeoutMs" },
    {
      name: "funding iterator with bad page size",
      call: async (c) => {
        for await (const _rate of c.iterateFundingRates({
          pair: "BTC/USD",
          source: "BYBIT",
          pageSize: 5000,
        })) {
          // never reached
        }
      },
      field: "pageSize",
    },
  ];

describe("input validation", () => {
  it.each(invalidInputs)("$name → PM_ERR_INVALID_REQUEST, no request sent", async ({ call, field }) => {
    const before = server.requests.length;
    const error: unknown = await call(client).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPmError(error, "PM_ERR_INVALID_REQUEST")).toBe(true);
    expect(isPmError(error) && error.details.field).toBe(field);
    expect(server.requests.length).toBe(before);
  });
});
