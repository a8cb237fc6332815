// The demo scenario, observed over HTTP at points of its cycle: each fault is visible to the daemon's default rules.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  WireFundingRatePage,
  WirePairPrice,
  WirePublisher,
  WireVault,
} from "../../src/upstream/wire.js";
import { DEMO_SCENARIO } from "../../src/simulator/scenario.js";
import { getJson, raw, startTestSim, type TestSim } from "./helpers.js";

let t: TestSim;
beforeAll(async () => {
  t = await startTestSim({ seed: 42, scenario: DEMO_SCENARIO });
});
afterAll(() => t.sim.close());

const at = (offsetMs: number): void => t.clock.set(t.sim.market.startMs + offsetMs);
const priceOf = async (pair: string): Promise<WirePairPrice> =>
  (await getJson<WirePairPrice>(t.sim, `/node/v1/data/${pair}?interval=1s&with_components=true`)).body;
const asFloat = (hex: string): number => Number(BigInt(hex)) / 1e18;

describe("DEMO_SCENARIO", () => {
  it("spikes BTC/USD by ~6 % between 5 s and 25 s of each 120 s cycle", async () => {
    for (const cycleMs of [0, 120_000, 360_000]) {
      at(cycleMs + 4_000);
      const before = asFloat((await priceOf("BTC/USD")).price);
      at(cycleMs + 10_000);
      const during = asFloat((await priceOf("BTC/USD")).price);
      at(cycleMs + 30_000);
      const after = asFloat((await priceOf("BTC/USD")).price);
      expect(during / before).toBeGreaterThan(1.04);
      expect(Math.abs(after / before - 1)).toBeLessThan(0.01);
    }
  });

  it("pauses the BTC vault and fails ETH/USD pair prices with 503 for a while", async () => {
    at(20_000);
    expect(
      (await getJson<WireVault>(t.sim, "/vault/api/v1/vaults/pragma-btc-vault")).body.deposit_constraints
        .paused,
    ).toBe(true);
    at(35_000);
    const outage = await raw(t.sim, "/node/v1/data/ETH/USD?interval=1s");
    expect(outage.status).toBe(503);
    expect(outage.headers["retry-after"]).toBe("1");
    at(60_000);
    expect((await raw(t.sim, "/node/v1/data/ETH/USD?interval=1s")).status).toBe(200);
    expect(
      (await getJson<WireVault>(t.sim, "/vault/api/v1/vaults/pragma-btc-vault")).body.deposit_constraints
        .paused,
    ).toBe(false);
  });

  it("leaves SOL/USD BINANCE > 0.5 % behind the median while frozen", async () => {
    at(70_000);
    const sol = await priceOf("SOL/USD");
    const binance = sol.components!.find((c) => c.source === "BINANCE")!;
    expect(1 - asFloat(binance.price) / asFloat(sol.price)).toBeGreaterThan(0.005);
    expect(sol.timestamp - binance.timestamp).toBeGreaterThan(20_000);
  });

  it("sets BTC/USD funding to 0.001 per hour from 60 s to 100 s", async () => {
    at(90_000);
    const nowS = Math.floor(t.clock.nowMs() / 1000);
    const url = `/node/v1/funding_rates/history/BTC/USD?source=HYPERLIQUID&frequency=All&timestamp=${nowS - 60},${nowS}`;
    const rates = (await getJson<WireFundingRatePage>(t.sim, url)).body.data;
    expect(rates.at(-1)!.hourly_rate).toBe(0.001);
    expect(rates[0]!.hourly_rate).not.toBe(0.001);
  });

  it("keeps FOURLEAF silent for more than 120 s, then it pushes again", async () => {
    const fourleaf = async (): Promise<WirePublisher> =>
      (
        await getJson<WirePublisher[]>(
          t.sim,
          "/node/v1/onchain/publishers?network=starknet-mainnet&data_type=Spot",
        )
      ).body.find((p) => p.publisher === "FOURLEAF")!;
    at(200_000);
    expect(t.clock.nowMs() / 1000 - (await fourleaf()).last_updated_timestamp).toBeGreaterThan(140);
    at(225_000);
    expect(t.clock.nowMs() / 1000 - (await fourleaf()).last_updated_timestamp).toBeLessThan(61);
  });
});
