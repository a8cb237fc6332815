// The project's own client decodes every simulator endpoint: the simulator speaks exactly the wire types.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDispatcher, createPragmaClient } from "../../src/upstream/client.js";
import type { PragmaClient } from "../../src/upstream/types.js";
import { isPmError } from "../../src/domain/errors.js";
import { startTestSim, T0_MS, type TestSim } from "./helpers.js";

let t: TestSim;
let client: PragmaClient;
const dispatcher = createDispatcher({ connections: 4, keepAliveTimeoutMs: 1_000 });

beforeAll(async () => {
  t = await startTestSim({ apiKeys: ["secret"] });
  t.clock.advance(3_600_000);
  client = createPragmaClient({
    baseUrl: t.sim.url,
    vaultBaseUrl: t.sim.vaultUrl,
    apiKey: "secret",
    dispatcher,
    timeoutMs: 2_000,
    retry: { maxAttempts: 1, baseDelayMs: 10, maxDelayMs: 10, maxElapsedMs: 100 },
  });
});
afterAll(async () => {
  await t.sim.close();
  await dispatcher.close();
});

describe("createPragmaClient against the simulator", () => {
  it("decodes pair prices with components (ms timestamps)", async () => {
    const price = await client.getPairPrice({
      pair: "BTC/USD",
      interval: "1s",
      aggregation: "median",
      withComponents: true,
    });
    expect(price.pairId).toBe("BTC/USD");
    expect(price.price.decimals).toBe(18);
    expect(Number(price.price.text)).toBeGreaterThan(50_000);
    expect(price.numSources).toBe(price.components.length);
    expect(Math.abs(price.timestampMs - t.clock.nowMs())).toBeLessThan(5_000);
  });

  it("decodes candles, funding pages and the funding iterator", async () => {
    const series = await client.getCandlesticks({ pair: "ETH/USD", interval: "1h" });
    expect(series.candles.length).toBe(15 * 24 + 2); // the whole 15-day history at 1 h
    expect(series.candles[0]!.timeMs).toBeGreaterThan(series.candles[1]!.timeMs);
    const startS = T0_MS / 1000 - 7_200;
    const page = await client.getFundingRates({
      pair: "BTC/USD",
      source: "HYPERLIQUID",
      rangeS: { start: startS, end: T0_MS / 1000 },
      frequency: "Minute",
      pageSize: 50,
    });
    expect(page.rates.length).toBe(50);
    expect(page.hasNextPage).toBe(true);
    const all: number[] = [];
    for await (const rate of client.iterateFundingRates({
      pair: "BTC/USD",
      source: "HYPERLIQUID",
      rangeS: { start: startS, end: T0_MS / 1000 },
      frequency: "Minute",
      pageSize: 50,
    })) {
      all.push(rate.timestampMs);
    }
    expect(all.length).toBe(121);
  });

  it("decodes on-chain entries, publishers and vaults", async () => {
    const entry = await client.getOnchainEntry({
      pair: "BTC/USD",
      network: "starknet-mainnet",
      aggregation: "median",
      components: true,
      variations: true,
    });
    expect(entry.decimalsKnown).toBe(true);
    expect(entry.components.length).toBe(entry.numSources);
    expect(Object.keys(entry.variations).sort()).toEqual(["1d", "1h", "1w"]);
    const publishers = await client.getOnchainPublishers({
      network: "starknet-mainnet",
      publisherType: "Spot",
    });
    expect(publishers.find((p) => p.publisher === "PRAGMA")?.type).toBe(1);
    const vault = await client.getVault("pragma-btc-vault");
    expect(vault.status).toBe("live");
    expect(vault.depositConstraints.paused).toBe(false);
  });

  it("surfaces simulator errors as typed PmErrors", async () => {
    const error: unknown = await client.getPairPrice({ pair: "FOO/USD" }).catch((e: unknown) => e);
    expect(isPmError(error, "PM_ERR_UPSTREAM_HTTP")).toBe(true);
    expect(isPmError(error) && error.details.status).toBe(404);
    const id = t.sim.control.inject({ kind: "malformed", endpoint: "vault" });
    const decodeError: unknown = await client.getVault("pragma-btc-vault").catch((e: unknown) => e);
    t.sim.control.remove(id);
    expect(isPmError(decodeError, "PM_ERR_UPSTREAM_DECODE")).toBe(true);
  });
});
