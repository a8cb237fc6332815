// On-chain entry, publishers and vault endpoints, plus API-key checking, over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  WireEntryError,
  WireOnchainEntrySet,
  WirePublisher,
  WireVault,
  WireVaultEnvelope,
} from "../../src/upstream/wire.js";
import { parseScenario } from "../../src/simulator/scenario.js";
import { getJson, raw, startTestSim, T0_MS, type TestSim } from "./helpers.js";
import {
  onchainEntryResponse,
  onchainPublishersResponse,
  vaultResponse,
  responseErrors,
} from "../fixtures/response-schemas.js";

let t: TestSim;
beforeAll(async () => {
  t = await startTestSim();
  t.clock.advance(3_600_000);
});
afterAll(() => t.sim.close());

const onchain = "/node/v1/onchain";

describe("GET /node/v1/onchain/{base}/{quote}", () => {
  it("returns the entry set with 8 decimals and seconds timestamps; components and variations only when asked", async () => {
    const { status, body } = await getJson<WireOnchainEntrySet>(
      t.sim,
      `${onchain}/BTC/USD?network=starknet-mainnet&aggregation=median&components=false&variations=false`,
    );
    expect(status).toBe(200);
    expect(responseErrors(onchainEntryResponse, body)).toEqual([]);
    expect(body).toMatchObject({
      pair_id: "BTC/USD",
      decimals: 8,
      asset_type: "Crypto",
      components: null,
      variations: null,
    });
    expect(body.last_updated_timestamp).toBeLessThanOrEqual(t.clock.nowMs() / 1000);
    expect(body.last_updated_timestamp).toBeGreaterThan(t.clock.nowMs() / 1000 - 61);
    expect(Number(BigInt(body.price)) / 1e8).toBeGreaterThan(50_000);
  });

  it("defaults as the live server does (the spec is silent): twap, no routing, components and variations", async () => {
    const twap = await getJson<WireEntryError>(t.sim, `${onchain}/BTC/USD?network=starknet-mainnet`);
    expect(twap.status).toBe(500);
    expect(twap.body.message).toMatch(/^Database error:/);
    const { body } = await getJson<WireOnchainEntrySet>(
      t.sim,
      `${onchain}/BTC/USD?network=starknet-mainnet&aggregation=median`,
    );
    expect(body.components?.length).toBe(body.nb_sources_aggregated);
    expect(Object.keys(body.variations ?? {})).toEqual(["1h", "1d", "1w"]);
    const unrouted = await getJson<WireEntryError>(
      t.sim,
      `${onchain}/BTC/EUR?network=starknet-mainnet&aggregation=median`,
    );
    expect(unrouted.status).toBe(404);
    expect(unrouted.body.message).toBe("Entry not found: BTC/EUR");
  });

  it("lists publisher components (tx hashes, pushed within the heartbeat) and 1h/1d/1w variations", async () => {
    const { body } = await getJson<WireOnchainEntrySet>(
      t.sim,
      `${onchain}/BTC/USD?network=starknet-mainnet&aggregation=median&components=true&variations=true`,
    );
    expect(responseErrors(onchainEntryResponse, body)).toEqual([]);
    const components = body.components ?? [];
    expect(components.length).toBe(body.nb_sources_aggregated);
    expect(new Set(components.map((c) => c.publisher))).toEqual(
      new Set(["PRAGMA", "FOURLEAF", "SPACESHARD", "SKYNET_TRADING", "FLOWDESK", "EQUILIBRIUM", "ALENO"]),
    );
    const nowS = t.clock.nowMs() / 1000;
    for (const c of components) {
      expect(c.tx_hash).toMatch(/^0x[0-9a-f]{63}$/);
      expect(c.timestamp).toBeGreaterThan(nowS - 61);
      expect(c.timestamp).toBeLessThanOrEqual(nowS);
    }
    expect(components.map((c) => c.timestamp)).toEqual(
      [...components.map((c) => c.timestamp)].sort((a, b) => a - b),
    );
    expect(Object.keys(body.variations ?? {})).toEqual(["1h", "1d", "1w"]);
    for (const value of Object.values(body.variations ?? {})) expect(Math.abs(value)).toBeLessThan(0.5);
  });

  it("uses 6 decimals for USDC/USD and USDT/USD and per-network feed sets", async () => {
    const usdc = await getJson<WireOnchainEntrySet>(
      t.sim,
      `${onchain}/USDC/USD?network=starknet-mainnet&aggregation=median`,
    );
    expect(usdc.body.decimals).toBe(6);
    expect(Number(BigInt(usdc.body.price)) / 1e6).toBeCloseTo(1, 1);
    const sepolia = await getJson<WireOnchainEntrySet>(
      t.sim,
      `${onchain}/BTC/USD?network=starknet-sepolia&aggregation=median&components=true`,
    );
    expect(new Set(sepolia.body.components?.map((c) => c.publisher))).toEqual(
      new Set(["PRAGMA", "FOURLEAF", "EQUILIBRIUM"]),
    );
    expect((await raw(t.sim, `${onchain}/SOL/USD?network=starknet-sepolia&aggregation=median`)).status).toBe(
      200,
    );
  });

  it("omits variations whose previous candle predates the market history", async () => {
    const scenario = parseScenario({ historyMs: 3 * 86_400_000 });
    const short = await startTestSim({ scenario });
    try {
      const { body } = await getJson<WireOnchainEntrySet>(
        short.sim,
        `${onchain}/ETH/USD?network=starknet-mainnet&aggregation=median&variations=true`,
      );
      expect(Object.keys(body.variations ?? {})).toEqual(["1h", "1d"]);
    } finally {
      await short.sim.close();
    }
  });

  it("supports timestamp lookups and routing, and rejects bad input", async () => {
    const atS = Math.floor((T0_MS + 600_000) / 1000);
    const past = await getJson<WireOnchainEntrySet>(
      t.sim,
      `${onchain}/BTC/USD?network=starknet-mainnet&aggregation=median&timestamp=${atS}`,
    );
    expect(past.body.last_updated_timestamp).toBeLessThanOrEqual(atS);
    const routed = await getJson<WireOnchainEntrySet>(
      t.sim,
      `${onchain}/BTC/EUR?network=starknet-mainnet&aggregation=median&routing=true`,
    );
    expect(routed.status).toBe(200);
    // as live: the number of components ((publisher, source) pairs) of both legs
    expect(routed.body.nb_sources_aggregated).toBe(routed.body.components?.length);
    expect(routed.body.nb_sources_aggregated).toBeGreaterThan(7);
    const impossible = await getJson<WireEntryError>(
      t.sim,
      `${onchain}/BTC/FOO?network=starknet-mainnet&aggregation=median&routing=true`,
    );
    expect(impossible.status).toBe(404);
    expect(impossible.body.message).toBe("Missing data for routing on pair: BTC/FOO");
    expect((await raw(t.sim, `${onchain}/BTC/USD`)).text).toBe(
      "Failed to deserialize query string: missing field `network`",
    );
    const badNetwork = await raw(t.sim, `${onchain}/BTC/USD?network=ethereum`);
    expect(badNetwork.status).toBe(400);
    expect(badNetwork.text).toMatch(
      /^Failed to deserialize query string: network: unknown variant `ethereum`/,
    );
    expect((await raw(t.sim, `${onchain}/BTC/USD?network=starknet-mainnet&components=maybe`)).status).toBe(
      400,
    );
    const future = await getJson<WireEntryError>(
      t.sim,
      `${onchain}/BTC/USD?network=starknet-mainnet&aggregation=median&timestamp=${atS + 86_400}`,
    );
    expect(future.status).toBe(400);
    expect((await raw(t.sim, `${onchain}/FOO/USD?network=starknet-mainnet&aggregation=median`)).status).toBe(
      404,
    );
    // upstream has no on-chain twap view: 500 (pragma-api-facts.md)
    expect((await raw(t.sim, `${onchain}/BTC/USD?network=starknet-mainnet&aggregation=twap`)).status).toBe(
      500,
    );
  });
});

describe("GET /node/v1/onchain/publishers", () => {
  it("lists publishers with stats and feeds (decimals per pair, seconds timestamps)", async () => {
    const { status, body } = await getJson<WirePublisher[]>(
      t.sim,
      `${onchain}/publishers?network=starknet-mainnet&data_type=Spot`,
    );
    expect(status).toBe(200);
    expect(responseErrors(onchainPublishersResponse, body)).toEqual([]);
    const names = body.map((p) => p.publisher);
    expect(names).toEqual([
      "ALENO",
      "AVNU",
      "EQUILIBRIUM",
      "FLOWDESK",
      "FOURLEAF",
      "KAIKO",
      "PRAGMA",
      "SKYNET_TRADING",
      "SPACESHARD",
    ]);
    const pragma = body.find((p) => p.publisher === "PRAGMA")!;
    expect(pragma.type).toBe(1);
    expect(body.find((p) => p.publisher === "AVNU")!.type).toBe(0);
    for (const publisher of body) {
      expect(publisher.nb_feeds).toBe(publisher.components.length);
      expect(publisher.daily_updates).toBe(publisher.components.reduce((sum, c) => sum + c.daily_updates, 0));
      expect(publisher.total_updates).toBeGreaterThan(publisher.daily_updates);
      expect(publisher.last_updated_timestamp).toBe(
        Math.max(...publisher.components.map((c) => c.last_updated_timestamp)),
      );
      for (const c of publisher.components) {
        expect(c.decimals).toBe(c.pair_id === "USDC/USD" || c.pair_id === "USDT/USD" ? 6 : 8);
        expect(c.daily_updates).toBeGreaterThanOrEqual(1440);
      }
    }
  });

  it("filters by data type and network, and requires both", async () => {
    const perp = await getJson<WirePublisher[]>(
      t.sim,
      `${onchain}/publishers?network=starknet-mainnet&data_type=Perp`,
    );
    expect(perp.body.map((p) => p.publisher)).toEqual(["PRAGMA", "SKYNET_TRADING"]);
    const sepolia = await getJson<WirePublisher[]>(
      t.sim,
      `${onchain}/publishers?network=starknet-sepolia&data_type=Spot`,
    );
    expect(sepolia.body.map((p) => p.publisher)).toEqual(["EQUILIBRIUM", "FOURLEAF", "PRAGMA"]);
    expect((await raw(t.sim, `${onchain}/publishers?network=starknet-mainnet`)).text).toBe(
      "Failed to deserialize query string: missing field `data_type`",
    );
    expect((await raw(t.sim, `${onchain}/publishers?data_type=Spot`)).status).toBe(400);
    expect((await raw(t.sim, `${onchain}/publishers?network=starknet-mainnet&data_type=spot`)).status).toBe(
      400,
    );
  });
});

describe("GET /vault/api/v1/vaults/{id}", () => {
  it("returns the spec's bare object; share price drifts slowly", async () => {
    const { status, body } = await getJson<WireVault>(t.sim, "/vault/api/v1/vaults/pragma-btc-vault");
    expect(status).toBe(200);
    expect(responseErrors(vaultResponse, body)).toEqual([]);
    expect(body).toMatchObject({
      id: "pragma-btc-vault",
      status: "live",
      deposit_constraints: { paused: false },
    });
    t.clock.advance(86_400_000);
    const later = await getJson<WireVault>(t.sim, "/vault/api/v1/vaults/pragma-btc-vault");
    t.clock.advance(-86_400_000);
    expect(later.body.share_price).not.toBe(body.share_price);
    expect(Math.abs(Number(later.body.share_price) / Number(body.share_price) - 1)).toBeLessThan(0.005);
    const retired = await getJson<WireVault>(t.sim, "/vault/api/v1/vaults/pragma-legacy-vault");
    expect(retired.body.status).toBe("retired");
  });

  it("serves the live API's variety of absent and null optional fields, fixed per seed and vault", async () => {
    const ids = ["pragma-btc-vault", "pragma-eth-vault", "pragma-usdc-vault", "pragma-legacy-vault"];
    const bodies = await Promise.all(
      ids.map(
        async (id) => (await getJson<Record<string, unknown>>(t.sim, `/vault/api/v1/vaults/${id}`)).body,
      ),
    );
    for (const body of bodies) {
      expect(responseErrors(vaultResponse, body)).toEqual([]);
      expect(body["api_endpoint"]).toBe(`/api/v1/vaults/${String(body["id"])}`);
    }
    // across the vaults every optional field is missing somewhere, present somewhere, null somewhere
    const text = (path: string, body: Record<string, unknown>): string => {
      const [head, leaf] = path.split(".") as [string, string | undefined];
      const parent = leaf === undefined ? body : (body[head] as Record<string, unknown> | null | undefined);
      const key = leaf ?? head;
      if (parent === null || parent === undefined || !(key in parent)) return "absent";
      return parent[key] === null ? "null" : "present";
    };
    const seen = new Set(
      bodies.flatMap((body) =>
        ["description", "mgmt_fee_bps", "contract.abi_version", "icons.light"].map((path) =>
          text(path, body),
        ),
      ),
    );
    expect(seen).toEqual(new Set(["absent", "null", "present"]));
    const again = await getJson<Record<string, unknown>>(t.sim, "/vault/api/v1/vaults/pragma-btc-vault");
    expect(Object.keys(again.body)).toEqual(Object.keys(bodies[0]!));
  });

  it("404s unknown and empty ids", async () => {
    const unknown = await getJson<WireEntryError>(t.sim, "/vault/api/v1/vaults/nope");
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe("Vault not found: nope");
    expect((await raw(t.sim, "/vault/api/v1/vaults/")).status).toBe(404);
  });

  it("wraps bodies in the envelope when the scenario asks for it", async () => {
    const enveloped = await startTestSim({ scenario: parseScenario({ vaultEnvelope: true }) });
    try {
      const ok = await getJson<WireVaultEnvelope>(enveloped.sim, "/vault/api/v1/vaults/pragma-eth-vault");
      expect(ok.body.status).toBe("ok");
      expect(ok.body.status === "ok" && responseErrors(vaultResponse, ok.body.data)).toEqual([]);
      const missing = await getJson<WireVaultEnvelope>(enveloped.sim, "/vault/api/v1/vaults/nope");
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ status: "error", msg: "Vault nope not found" });
    } finally {
      await enveloped.sim.close();
    }
  });
});

describe("x-api-key", () => {
  it("is required on pair price and candlestick only when keys are configured", async () => {
    const secured = await startTestSim({ apiKeys: ["k-1", "k-2"] });
    try {
      for (const path of ["/node/v1/data/BTC/USD", "/node/v1/aggregation/candlestick/BTC/USD"]) {
        const missing = await getJson<{ message: string }>(secured.sim, path);
        expect(missing.status).toBe(401);
        expect(missing.body.message).toMatch(/Invalid API key/);
        expect((await raw(secured.sim, path, { headers: { "x-api-key": "wrong" } })).status).toBe(401);
        expect((await raw(secured.sim, path, { headers: { "x-api-key": "k-2" } })).status).toBe(200);
      }
      expect(
        (await raw(secured.sim, `${onchain}/BTC/USD?network=starknet-mainnet&aggregation=median`)).status,
      ).toBe(200);
      expect((await raw(secured.sim, "/vault/api/v1/vaults/pragma-btc-vault")).status).toBe(200);
      expect(
        (await raw(secured.sim, "/node/v1/funding_rates/history/BTC/USD?source=KRAKEN&page_size=1")).status,
      ).toBe(200);
    } finally {
      await secured.sim.close();
    }
    expect((await raw(t.sim, "/node/v1/data/BTC/USD")).status).toBe(200);
  });
});
