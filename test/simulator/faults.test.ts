// Every fault kind is observable over HTTP; scheduled faults follow atMs/durationMs/repeatEveryMs; control endpoint works.
import { afterEach, describe, expect, it } from "vitest";
import { request } from "undici";
import type {
  WireFundingRatePage,
  WireOnchainEntrySet,
  WirePairPrice,
  WirePublisher,
  WireVault,
} from "../../src/upstream/wire.js";
import { parseScenario } from "../../src/simulator/scenario.js";
import type { SimState } from "../../src/simulator/control.js";
import { getJson, raw, startTestSim, testAgent, type TestSim } from "./helpers.js";

let t: TestSim | undefined;
afterEach(async () => {
  await t?.sim.close();
  t = undefined;
});

const price = async (
  sim: TestSim,
  pair = "BTC/USD",
  query = "interval=1s&with_components=true",
): Promise<WirePairPrice> => (await getJson<WirePairPrice>(sim.sim, `/node/v1/data/${pair}?${query}`)).body;
const asFloat = (hex: string, decimals = 18): number => Number(BigInt(hex)) / 10 ** decimals;

describe("price faults", () => {
  it("spike multiplies the mid instantly while active, then resolves", async () => {
    t = await startTestSim();
    const before = asFloat((await price(t)).price);
    const id = t.sim.control.inject({ kind: "spike", pair: "BTC/USD", factor: 1.06 }, { durationMs: 20_000 });
    expect(id).toBe("f1");
    t.clock.advance(5_000);
    expect(asFloat((await price(t)).price) / before).toBeGreaterThan(1.05);
    t.clock.advance(20_000);
    expect(Math.abs(asFloat((await price(t)).price) / before - 1)).toBeLessThan(0.01);
  });

  it("drift moves linearly over its duration", async () => {
    t = await startTestSim({
      scenario: parseScenario({
        faults: [{ atMs: 0, durationMs: 100_000, fault: { kind: "drift", pair: "ETH/USD", factor: 0.9 } }],
      }),
    });
    const clean = await startTestSim(); // same seed, no faults: the reference
    try {
      const ratioAt = async (offsetMs: number): Promise<number> => {
        t!.clock.set(t!.sim.market.startMs + offsetMs);
        clean.clock.set(clean.sim.market.startMs + offsetMs);
        return asFloat((await price(t!, "ETH/USD")).price) / asFloat((await price(clean, "ETH/USD")).price);
      };
      expect(await ratioAt(50_000)).toBeCloseTo(0.95, 2);
      expect(await ratioAt(90_000)).toBeCloseTo(0.91, 2);
      expect(await ratioAt(110_000)).toBeCloseTo(1, 3);
    } finally {
      await clean.sim.close();
    }
  });

  it("frozen source keeps its old price and timestamp; dropped sources leave aggregation and components", async () => {
    t = await startTestSim();
    t.sim.control.inject({ kind: "frozenSource", pair: "SOL/USD", source: "BINANCE" });
    t.sim.control.inject({ kind: "dropSources", pair: "SOL/USD", sources: ["OKX", "KUCOIN"] });
    const first = await price(t, "SOL/USD");
    t.clock.advance(120_000);
    const later = await price(t, "SOL/USD");
    const binance = (p: WirePairPrice) => p.components!.find((c) => c.source === "BINANCE")!;
    expect(binance(later)).toEqual(binance(first));
    expect(later.timestamp - binance(later).timestamp).toBeGreaterThan(100_000);
    expect(later.components!.map((c) => c.source)).toEqual(["BINANCE", "BYBIT", "COINBASE"]);
    expect(later.num_sources_aggregated).toBe(3);
  });
});

describe("on-chain, funding and vault faults", () => {
  it("frozen publisher stops pushing (stale timestamps, same tx hash)", async () => {
    t = await startTestSim();
    t.sim.control.inject({ kind: "frozenPublisher", publisher: "FOURLEAF", network: "starknet-mainnet" });
    const url = "/node/v1/onchain/BTC/USD?network=starknet-mainnet&aggregation=median&components=true";
    const first = (await getJson<WireOnchainEntrySet>(t.sim, url)).body;
    t.clock.advance(300_000);
    const later = (await getJson<WireOnchainEntrySet>(t.sim, url)).body;
    const fourleaf = (set: WireOnchainEntrySet) => set.components!.filter((c) => c.publisher === "FOURLEAF");
    expect(fourleaf(later)).toEqual(fourleaf(first));
    expect(later.components!.filter((c) => c.publisher === "PRAGMA")[0]!.timestamp).toBeGreaterThan(
      first.components!.filter((c) => c.publisher === "PRAGMA")[0]!.timestamp,
    );
    const publishers = (
      await getJson<WirePublisher[]>(
        t.sim,
        "/node/v1/onchain/publishers?network=starknet-mainnet&data_type=Spot",
      )
    ).body;
    const stale = publishers.find((p) => p.publisher === "FOURLEAF")!;
    expect(t.clock.nowMs() / 1000 - stale.last_updated_timestamp).toBeGreaterThan(290);
  });

  it("a spike above 2.5 % triggers a deviation push before the next heartbeat", async () => {
    t = await startTestSim();
    const url = "/node/v1/onchain/BTC/USD?network=starknet-mainnet&aggregation=median";
    const before = (await getJson<WireOnchainEntrySet>(t.sim, url)).body;
    t.sim.control.inject({ kind: "spike", pair: "BTC/USD", factor: 1.06 });
    t.clock.advance(10_000);
    const after = (await getJson<WireOnchainEntrySet>(t.sim, url)).body;
    expect(asFloat(after.price, 8) / asFloat(before.price, 8)).toBeGreaterThan(1.04);
  });

  it("funding spike multiplies or sets the hourly rate", async () => {
    t = await startTestSim();
    const nowS = Math.floor(t.clock.nowMs() / 1000);
    const url = `/node/v1/funding_rates/history/BTC/USD?source=HYPERLIQUID&frequency=Minute&timestamp=${nowS - 60},${nowS}`;
    const base = (await getJson<WireFundingRatePage>(t.sim, url)).body.data.at(-1)!.hourly_rate;
    const id = t.sim.control.inject({
      kind: "fundingSpike",
      pair: "BTC/USD",
      source: "HYPERLIQUID",
      factor: 25,
    });
    const spiked = (await getJson<WireFundingRatePage>(t.sim, url)).body.data.at(-1)!.hourly_rate;
    expect(spiked / base).toBeCloseTo(25, 2);
    t.sim.control.remove(id);
    t.sim.control.inject({ kind: "fundingSpike", pair: "BTC/USD", hourlyRate: 0.001 });
    expect((await getJson<WireFundingRatePage>(t.sim, url)).body.data.at(-1)!.hourly_rate).toBe(0.001);
  });

  it("vault paused flips deposit_constraints.paused; vault status overrides status", async () => {
    t = await startTestSim();
    const url = "/vault/api/v1/vaults/pragma-btc-vault";
    t.sim.control.inject({ kind: "vaultPaused", vault: "pragma-btc-vault" });
    expect((await getJson<WireVault>(t.sim, url)).body).toMatchObject({
      status: "paused",
      deposit_constraints: { paused: true },
    });
    t.sim.control.clear();
    t.sim.control.inject({ kind: "vaultStatus", vault: "pragma-btc-vault", status: "retired" });
    expect((await getJson<WireVault>(t.sim, url)).body.status).toBe("retired");
  });
});

describe("transport faults", () => {
  it.each([
    [500, "application/json"],
    [503, "text/plain; charset=utf-8"],
    [429, "text/plain; charset=utf-8"],
  ] as const)("outage %i per endpoint and pair, with Retry-After", async (status, contentType) => {
    t = await startTestSim();
    t.sim.control.inject({ kind: "outage", endpoint: "pair_price", pair: "ETH/USD", status, retryAfterS: 3 });
    const hit = await raw(t.sim, "/node/v1/data/ETH/USD");
    expect(hit.status).toBe(status);
    expect(hit.headers["content-type"]).toBe(contentType);
    if (status !== 500) expect(hit.headers["retry-after"]).toBe("3");
    expect((await raw(t.sim, "/node/v1/data/BTC/USD")).status).toBe(200);
    expect((await raw(t.sim, "/node/v1/aggregation/candlestick/ETH/USD")).status).toBe(200);
  });

  it("latency delays the response by at least the given ms", async () => {
    t = await startTestSim();
    t.sim.control.inject({ kind: "latency", endpoint: "vault", latencyMs: 50 });
    const startedMs = performance.now();
    expect((await raw(t.sim, "/vault/api/v1/vaults/pragma-btc-vault")).status).toBe(200);
    expect(performance.now() - startedMs).toBeGreaterThanOrEqual(49);
  });

  it("malformed body is invalid JSON with a 200", async () => {
    t = await startTestSim();
    t.sim.control.inject({ kind: "malformed", endpoint: "onchain" });
    const response = await raw(t.sim, "/node/v1/onchain/BTC/USD?network=starknet-mainnet&aggregation=median");
    expect(response.status).toBe(200);
    expect(() => JSON.parse(response.text) as unknown).toThrow();
  });

  it("truncated body: Content-Length lies and the connection drops mid-body", async () => {
    t = await startTestSim();
    t.sim.control.inject({ kind: "truncated", endpoint: "publishers" });
    const response = await request(
      `${t.sim.url}/node/v1/onchain/publishers?network=starknet-mainnet&data_type=Spot`,
      {
        dispatcher: testAgent,
      },
    );
    expect(response.statusCode).toBe(200);
    expect(Number(response.headers["content-length"])).toBeGreaterThan(100);
    await expect(response.body.text()).rejects.toThrow();
  });
});

describe("scheduled faults and the control endpoint", () => {
  it("follows atMs, durationMs and repeatEveryMs relative to simulator start", async () => {
    t = await startTestSim({
      scenario: parseScenario({
        repeatEveryMs: 60_000,
        faults: [
          { atMs: 10_000, durationMs: 5_000, fault: { kind: "outage", endpoint: "vault", status: 503 } },
        ],
      }),
    });
    const statusAt = async (offsetMs: number): Promise<number> => {
      t!.clock.set(t!.sim.market.startMs + offsetMs);
      return (await raw(t!.sim, "/vault/api/v1/vaults/pragma-btc-vault")).status;
    };
    expect([
      await statusAt(9_999),
      await statusAt(10_000),
      await statusAt(14_999),
      await statusAt(15_000),
    ]).toEqual([200, 503, 503, 200]);
    expect([await statusAt(70_000), await statusAt(75_000), await statusAt(130_001)]).toEqual([
      503, 200, 503,
    ]);
  });

  it("injects, lists and removes faults over HTTP", async () => {
    t = await startTestSim();
    const post = await raw(t.sim, "/_sim/faults", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "outage", status: 503, endpoint: "vault", durationMs: 30_000 }),
    });
    expect(post.status).toBe(201);
    const { id } = JSON.parse(post.text) as { id: string };
    expect((await raw(t.sim, "/vault/api/v1/vaults/pragma-btc-vault")).status).toBe(503);
    const state = (await getJson<SimState>(t.sim, "/_sim/state")).body;
    expect(state.faults).toMatchObject([{ id, origin: "control", active: true, durationMs: 30_000 }]);
    expect((await raw(t.sim, `/_sim/faults/${id}`, { method: "DELETE" })).status).toBe(204);
    expect((await raw(t.sim, `/_sim/faults/${id}`, { method: "DELETE" })).status).toBe(404);
    expect((await raw(t.sim, "/vault/api/v1/vaults/pragma-btc-vault")).status).toBe(200);

    const nested = await raw(t.sim, "/_sim/faults", {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ fault: { kind: "vaultPaused", vault: "pragma-eth-vault" }, delayMs: 1_000 }),
    });
    expect(nested.status).toBe(201);
    expect(
      (await getJson<WireVault>(t.sim, "/vault/api/v1/vaults/pragma-eth-vault")).body.deposit_constraints
        .paused,
    ).toBe(false);
    t.clock.advance(1_000);
    expect(
      (await getJson<WireVault>(t.sim, "/vault/api/v1/vaults/pragma-eth-vault")).body.deposit_constraints
        .paused,
    ).toBe(true);
    expect((await raw(t.sim, "/_sim/faults", { method: "DELETE" })).status).toBe(204);
    expect((await getJson<SimState>(t.sim, "/_sim/state")).body.faults).toEqual([]);

    const bad = await raw(t.sim, "/_sim/faults", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "spike", pair: "BTC/USD" }),
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("body.factor");
    const json = { "content-type": "application/json" };
    expect((await raw(t.sim, "/_sim/faults", { method: "POST", headers: json, body: "{" })).status).toBe(400);
  });

  it("DELETE /_sim/faults keeps scenario faults; /_sim/faults/all removes them too", async () => {
    t = await startTestSim({
      scenario: parseScenario({
        faults: [{ atMs: 0, fault: { kind: "outage", endpoint: "vault", status: 500 } }],
      }),
    });
    expect((await raw(t.sim, "/_sim/faults", { method: "DELETE" })).status).toBe(204);
    expect((await raw(t.sim, "/vault/api/v1/vaults/pragma-btc-vault")).status).toBe(500);
    expect((await raw(t.sim, "/_sim/faults/all", { method: "DELETE" })).status).toBe(204);
    expect((await raw(t.sim, "/vault/api/v1/vaults/pragma-btc-vault")).status).toBe(200);
  });
});
