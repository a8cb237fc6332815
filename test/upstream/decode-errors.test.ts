// Table of malformed upstream bodies: each yields the right PmError code and names the offending field, or
// (a bad list item) is left out and reported while the rest of the body decodes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isPmError, type PmError } from "../../src/domain/errors.js";
import {
  decodeCandleSeriesBody,
  decodeFundingRatePageBody,
  decodeOnchainEntrySetBody,
  decodeOnchainPublishersBody,
  decodePairPrice,
  decodePairPriceBody,
  decodeVaultBody,
  type SkippedItem,
  type SkippedItemObserver,
} from "../../src/upstream/index.js";
import { VAULT_JSON, fixture } from "./helpers.js";

type Json = Record<string, unknown>;
const pairPrice = (): Json => JSON.parse(fixture("data_btc_usd_median_1min_with_components.json")) as Json;
const candles = (): Json => JSON.parse(fixture("candlestick_btc_usd_15min.json")) as Json;
const funding = (): Json =>
  JSON.parse(fixture("funding_rates_history_btc_usd_hyperliquid_hour.json")) as Json;
const onchain = (): Json => JSON.parse(fixture("onchain_btc_usd_mainnet.json")) as Json;
const publishers = (): Json[] => JSON.parse(fixture("onchain_publishers_mainnet_spot.json")) as Json[];
const vault = (): Json => JSON.parse(JSON.stringify(VAULT_JSON)) as Json;
const at = (value: unknown, ...path: (string | number)[]): Json =>
  path.reduce<unknown>((o, key) => (o as Record<string | number, unknown>)[key], value) as Json;

/** Apply an edit to a fresh body and serialise it. */
function edit<T>(make: () => T, change: (body: T) => void): string {
  const body = make();
  change(body);
  return JSON.stringify(body);
}

/** The PmError a decoder throws for `text`. */
function decodeError(decode: (text: string) => unknown, text: string): PmError {
  try {
    decode(text);
  } catch (error) {
    if (isPmError(error)) return error;
    throw error;
  }
  throw new Error("decoded without error");
}

const cases: readonly { name: string; decode: (text: string) => unknown; body: string; field: string }[] = [
  {
    name: "pair: missing price",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => delete b["price"]),
    field: "price",
  },
  {
    name: "pair: decimal price",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => (b["price"] = "12345")),
    field: "price",
  },
  {
    name: "pair: bad hex",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => (b["price"] = "0xZZ12")),
    field: "price",
  },
  {
    name: "pair: bare 0x",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => (b["price"] = "0x")),
    field: "price",
  },
  {
    name: "pair: padded hex",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => (b["price"] = " 0x12")),
    field: "price",
  },
  {
    name: "pair: hex with inner space",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => (b["price"] = "0x12 34")),
    field: "price",
  },
  {
    name: "pair: hex with trailing newline",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => (b["price"] = "0x1234\n")),
    field: "price",
  },
  {
    name: "pair: numeric price",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => (b["price"] = 12)),
    field: "price",
  },
  {
    name: "pair: components an object",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => (b["components"] = {})),
    field: "components",
  },
  {
    name: "pair: timestamp above 2^53",
    decode: decodePairPriceBody,
    // The digits as the wire carries them: JSON.parse rounds them to 2^53, which is not a safe integer.
    body: fixture("data_eth_usd_default.json").replace("1741594457087", "9007199254740993"),
    field: "timestamp",
  },
  {
    name: "pair: timestamp fractional",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => (b["timestamp"] = 1.5)),
    field: "timestamp",
  },
  {
    name: "pair: num sources as string",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => (b["num_sources_aggregated"] = "5")),
    field: "num_sources_aggregated",
  },
  {
    name: "pair: negative decimals",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => (b["decimals"] = -1)),
    field: "decimals",
  },
  { name: "pair: empty body", decode: decodePairPriceBody, body: "", field: "body" },
  { name: "pair: whitespace body", decode: decodePairPriceBody, body: "  \n", field: "body" },
  {
    name: "pair: HTML error page",
    decode: decodePairPriceBody,
    body: "<!doctype html><h1>502 Bad Gateway</h1>",
    field: "body",
  },
  {
    name: "pair: truncated JSON",
    decode: decodePairPriceBody,
    body: fixture("data_eth_usd_default.json").slice(0, 40),
    field: "body",
  },
  { name: "pair: array body", decode: decodePairPriceBody, body: "[]", field: "body" },
  { name: "pair: null body", decode: decodePairPriceBody, body: "null", field: "body" },
  {
    name: "candle: missing data",
    decode: decodeCandleSeriesBody,
    body: edit(candles, (b) => delete b["data"]),
    field: "data",
  },
  {
    name: "funding: missing has_next_page",
    decode: decodeFundingRatePageBody,
    body: edit(funding, (b) => delete b["has_next_page"]),
    field: "has_next_page",
  },
  {
    name: "onchain: bad variation",
    decode: decodeOnchainEntrySetBody,
    body: edit(onchain, (b) => (at(b, "variations")["1h"] = "x")),
    field: "variations.1h",
  },
  {
    name: "onchain: variations array",
    decode: decodeOnchainEntrySetBody,
    body: edit(onchain, (b) => (b["variations"] = [1])),
    field: "variations",
  },
  {
    name: "onchain: negative timestamp",
    decode: decodeOnchainEntrySetBody,
    body: edit(onchain, (b) => (b["last_updated_timestamp"] = -1)),
    field: "last_updated_timestamp",
  },
  { name: "publishers: object body", decode: decodeOnchainPublishersBody, body: "{}", field: "body" },
  {
    name: "vault: paused as a string",
    decode: decodeVaultBody,
    body: edit(vault, (b) => (at(b, "deposit_constraints")["paused"] = "no")),
    field: "deposit_constraints.paused",
  },
  {
    name: "vault: share_price absent",
    decode: decodeVaultBody,
    body: edit(vault, (b) => delete b["share_price"]),
    field: "share_price",
  },
  {
    name: "vault: status null",
    decode: decodeVaultBody,
    body: edit(vault, (b) => (b["status"] = null)),
    field: "status",
  },
  {
    name: "vault: envelope tvl as a number",
    decode: decodeVaultBody,
    body: edit(
      () => ({ status: "ok", data: vault() }),
      (b) => (b.data["tvl"] = 1523400.12),
    ),
    field: "data.tvl",
  },
];

/** List items that fail validation: the decoder leaves each out and reports it, the rest of the body stands. */
const skippedCases: readonly {
  name: string;
  decode: (text: string, onSkip?: SkippedItemObserver) => unknown;
  body: string;
  field: string;
}[] = [
  {
    name: "pair: component bad hex",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => (at(b, "components", 2)["price"] = "0xnothex")),
    field: "components[2].price",
  },
  {
    name: "pair: component missing source",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => delete at(b, "components", 0)["source"]),
    field: "components[0].source",
  },
  {
    name: "pair: component not an object",
    decode: decodePairPriceBody,
    body: edit(pairPrice, (b) => ((b["components"] as unknown[])[1] = 7)),
    field: "components[1]",
  },
  {
    name: "candle: bad time",
    decode: decodeCandleSeriesBody,
    body: edit(candles, (b) => (at(b, "data", 0)["time"] = "yesterday")),
    field: "data[0].time",
  },
  {
    name: "candle: hex open",
    decode: decodeCandleSeriesBody,
    body: edit(candles, (b) => (at(b, "data", 1)["open"] = "0x12")),
    field: "data[1].open",
  },
  {
    name: "candle: float close",
    decode: decodeCandleSeriesBody,
    body: edit(candles, (b) => (at(b, "data", 3)["close"] = 8.2e22)),
    field: "data[3].close",
  },
  {
    name: "funding: rate as string",
    decode: decodeFundingRatePageBody,
    body: edit(funding, (b) => (at(b, "data", 0)["hourly_rate"] = "1e-5")),
    field: "data[0].hourly_rate",
  },
  {
    name: "funding: ms above 2^53",
    decode: decodeFundingRatePageBody,
    body: edit(funding, (b) => (at(b, "data", 5)["timestamp_ms"] = 2 ** 60)),
    field: "data[5].timestamp_ms",
  },
  {
    name: "onchain: missing tx_hash",
    decode: decodeOnchainEntrySetBody,
    body: edit(onchain, (b) => delete at(b, "components", 0)["tx_hash"]),
    field: "components[0].tx_hash",
  },
  {
    name: "publishers: fractional decimals",
    decode: decodeOnchainPublishersBody,
    body: edit(publishers, (b) => (at(b, 0, "components", 1)["decimals"] = 1.5)),
    field: "[0].components[1].decimals",
  },
];

describe("skipped list items", () => {
  it.each(skippedCases)("$name → item left out, reported at $field", ({ decode, body, field }) => {
    const skipped: SkippedItem[] = [];
    expect(() => decode(body, (item) => skipped.push(item))).not.toThrow();
    expect(skipped).toHaveLength(1);
    expect(skipped[0]!.field).toBe(field);
    expect(skipped[0]!.expected.length).toBeGreaterThan(0);
  });

  it("keeps the other items of the list, in order", () => {
    const body = skippedCases.find((c) => c.name === "pair: component bad hex")!.body;
    const price = decodePairPriceBody(body);
    expect(price.components.map((c) => c.source)).toEqual(["BINANCE", "BYBIT", "KUCOIN", "OKX"]);
  });
});

describe("decode errors", () => {
  it.each(cases)("$name → PM_ERR_UPSTREAM_DECODE at $field", ({ decode, body, field }) => {
    const error = decodeError(decode, body);
    expect(error.code).toBe("PM_ERR_UPSTREAM_DECODE");
    expect(error.retryable).toBe(false);
    expect(error.details.field).toBe(field);
    expect(error.message).toContain(`: ${field}: `);
  });

  it("names endpoint, path and expectation in the message", () => {
    const error = decodeError(decodePairPriceBody, cases.find((c) => c.name === "pair: bad hex")!.body);
    expect(error.message).toBe("pair_price: price: expected 0x-prefixed hex string");
    expect(error.details.endpoint).toBe("pair_price");
  });

  it("turns a vault error envelope into an HTTP-style error with a vault body", () => {
    const error = decodeError(decodeVaultBody, JSON.stringify({ status: "error", msg: "vault not found" }));
    expect(error.code).toBe("PM_ERR_UPSTREAM_HTTP");
    expect(error.details.body).toEqual({ kind: "vault", message: "vault not found" });
  });

  it("parses any hex price exactly (no float on the way)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }), fc.boolean(), (raw, upper) => {
        const hex = raw.toString(16);
        const body = { ...pairPrice(), price: `0x${upper ? hex.toUpperCase() : hex}`, components: null };
        expect(decodePairPrice(body).price.raw).toBe(raw);
      }),
    );
  });
});
