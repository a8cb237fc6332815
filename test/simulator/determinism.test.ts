// Same seed + scenario + manual clock + requests ⇒ byte-identical responses; a different seed changes them.
import { afterAll, describe, expect, it } from "vitest";
import { DEMO_SCENARIO } from "../../src/simulator/scenario.js";
import { raw, startTestSim, T0_MS, type TestSim } from "./helpers.js";

const PATHS = [
  "/node/v1/data/BTC/USD?interval=1s&with_components=true",
  "/node/v1/data/ETH/USD?aggregation=twap&interval=1h&with_components=true",
  "/node/v1/data/BTC/EUR?interval=1s",
  `/node/v1/data/SOL/USD?timestamp=${T0_MS / 1000 - 3_600}&with_components=true`,
  "/node/v1/aggregation/candlestick/BTC/USD?interval=1min",
  "/node/v1/funding_rates/history/ETH/USD?source=PARADEX&frequency=Hour&page=1&page_size=50",
  "/node/v1/onchain/BTC/USD?network=starknet-mainnet&components=true&variations=true",
  "/node/v1/onchain/publishers?network=starknet-mainnet&data_type=Spot",
  "/vault/api/v1/vaults/pragma-btc-vault",
  "/node/v1/data/FOO/USD",
  "/node/v1/data/BTC/USD?aggregation=mean",
];

const sims: TestSim[] = [];
afterAll(() => Promise.all(sims.map((s) => s.sim.close())));

async function transcript(seed: number): Promise<string[]> {
  const t = await startTestSim({ seed, scenario: DEMO_SCENARIO });
  sims.push(t);
  const out: string[] = [];
  for (const offsetMs of [0, 7_000, 31_000, 47_500, 64_000, 125_000]) {
    t.clock.set(T0_MS + offsetMs);
    for (const path of PATHS) {
      const response = await raw(t.sim, path);
      out.push(`${response.status} ${path}\n${response.text}`);
    }
  }
  return out;
}

describe("determinism", () => {
  it("produces byte-identical responses for the same seed, scenario and clock", async () => {
    const [a, b] = await Promise.all([transcript(42), transcript(42)]);
    expect(a.length).toBe(PATHS.length * 6);
    expect(b).toEqual(a);
  });

  it("produces different markets for different seeds", async () => {
    const [a, b] = await Promise.all([transcript(42), transcript(43)]);
    expect(b[0]).not.toEqual(a[0]);
  });

  it("starts every pair at its reference price regardless of seed", async () => {
    const t = await startTestSim({ seed: 99 });
    sims.push(t);
    const { text } = await raw(t.sim, "/node/v1/aggregation/candlestick/BTC/USD?interval=1min");
    const newest = (JSON.parse(text) as { data: { open: string }[] }).data[0]!;
    expect(newest.open).toBe("82069270000000000000000");
  });
});
