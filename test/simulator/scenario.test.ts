// Scenario parsing: valid documents, errors naming the field, files, the demo scenario; the pure market model.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isPmError } from "../../src/domain/errors.js";
import { createManualClock } from "../../src/simulator/clock.js";
import { baseMid, createMarket } from "../../src/simulator/market.js";
import {
  DEMO_SCENARIO,
  loadScenarioFile,
  parseScenario,
  resolveScenario,
} from "../../src/simulator/scenario.js";
import { T0_MS } from "./helpers.js";

function errorOf(json: unknown): string {
  try {
    parseScenario(json);
  } catch (error) {
    expect(isPmError(error, "PM_ERR_CONFIG")).toBe(true);
    return (error as Error).message;
  }
  throw new Error("expected parseScenario to throw");
}

describe("parseScenario", () => {
  it("accepts every fault kind with defaults filled in", () => {
    const scenario = parseScenario({
      name: "all",
      seed: 5,
      repeatEveryMs: 60_000,
      faults: [
        { atMs: 0, durationMs: 1_000, fault: { kind: "spike", pair: "BTC/USD", factor: 1.1 } },
        { atMs: 0, durationMs: 1_000, fault: { kind: "drift", pair: "BTC/USD", factor: 0.9 } },
        { atMs: 0, durationMs: 1_000, fault: { kind: "frozenSource", source: "BINANCE" } },
        {
          atMs: 0,
          durationMs: 1_000,
          fault: { kind: "frozenPublisher", publisher: "AVNU", network: "starknet-sepolia" },
        },
        { atMs: 0, durationMs: 1_000, fault: { kind: "dropSources", sources: ["OKX"], pair: "ETH/USD" } },
        {
          atMs: 0,
          durationMs: 1_000,
          fault: { kind: "outage", status: 429, endpoint: "onchain", retryAfterS: 2 },
        },
        { atMs: 0, durationMs: 1_000, fault: { kind: "latency", latencyMs: 20 } },
        { atMs: 0, durationMs: 1_000, fault: { kind: "malformed", pair: "BTC/USD" } },
        { atMs: 0, durationMs: 1_000, fault: { kind: "truncated", endpoint: "vault" } },
        { atMs: 0, durationMs: 1_000, fault: { kind: "vaultPaused", vault: "pragma-btc-vault" } },
        {
          atMs: 0,
          durationMs: 1_000,
          fault: { kind: "vaultStatus", vault: "pragma-btc-vault", status: "retired" },
        },
        { atMs: 0, durationMs: 1_000, fault: { kind: "fundingSpike", pair: "BTC/USD", hourlyRate: 0.01 } },
      ],
    });
    expect(scenario.faults).toHaveLength(12);
    expect(scenario.faults.every((f) => f.repeatEveryMs === 60_000)).toBe(true);
    expect(scenario).toMatchObject({ name: "all", seed: 5, vaultEnvelope: false, historyMs: null });
    expect(parseScenario({})).toEqual({
      name: "scenario",
      seed: null,
      vaultEnvelope: false,
      historyMs: null,
      faults: [],
    });
  });

  it.each([
    [[], "scenario (root): must be an object"],
    [{ faults: {} }, "scenario faults: must be an array"],
    [{ colour: 1 }, "scenario colour: unknown field"],
    [
      { faults: [{ fault: { kind: "spike", pair: "BTC/USD", factor: 2 } }] },
      "faults[0].atMs: must be a non-negative number",
    ],
    [{ faults: [{ atMs: 0, fault: { kind: "boom" } }] }, 'faults[0].fault.kind: unknown fault kind "boom"'],
    [
      { faults: [{ atMs: 0, fault: { kind: "spike", pair: "btc-usd", factor: 2 } }] },
      "faults[0].fault.pair: must be an upper-case pair",
    ],
    [
      { faults: [{ atMs: 0, fault: { kind: "spike", pair: "BTC/USD", factor: -1 } }] },
      "faults[0].fault.factor: must be a positive number",
    ],
    [
      { faults: [{ atMs: 0, fault: { kind: "drift", pair: "BTC/USD", factor: 2 } }] },
      "faults[0].durationMs: is required for a drift",
    ],
    [
      { faults: [{ atMs: 0, fault: { kind: "outage", status: 404 } }] },
      "faults[0].fault.status: must be one of 500, 503, 429",
    ],
    [
      { faults: [{ atMs: 0, fault: { kind: "outage", status: 503, endpoint: "data" } }] },
      "faults[0].fault.endpoint: must be one of",
    ],
    [
      { faults: [{ atMs: 0, fault: { kind: "frozenPublisher", publisher: "X", network: "eth" } }] },
      "faults[0].fault.network",
    ],
    [{ faults: [{ atMs: 0, fault: { kind: "dropSources", sources: [] } }] }, "faults[0].fault.sources"],
    [
      { faults: [{ atMs: 0, fault: { kind: "fundingSpike", pair: "BTC/USD" } }] },
      "factor or hourlyRate is required",
    ],
    [
      { faults: [{ atMs: 0, fault: { kind: "latency", latencyMs: 5, extra: 1 } }] },
      "faults[0].fault.extra: unknown field",
    ],
    [
      { repeatEveryMs: 1_000, faults: [{ atMs: 0, fault: { kind: "latency", latencyMs: 5 } }] },
      "faults[0].durationMs: must be set",
    ],
    [{ vaultEnvelope: "yes" }, "scenario vaultEnvelope: must be a boolean"],
  ])("rejects %j naming the field", (json, message) => {
    expect(errorOf(json)).toContain(message);
  });
});

describe("scenario files and the demo", () => {
  it("loads files, resolves 'demo', and reports unreadable or invalid files", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-scenario-"));
    const good = join(dir, "good.json");
    writeFileSync(
      good,
      JSON.stringify({ name: "file", faults: [{ atMs: 1, fault: { kind: "vaultPaused", vault: "v" } }] }),
    );
    expect((await loadScenarioFile(good)).name).toBe("file");
    expect(resolveScenario(good).faults).toHaveLength(1);
    expect(resolveScenario("demo")).toBe(DEMO_SCENARIO);
    const broken = join(dir, "broken.json");
    writeFileSync(broken, "{");
    await expect(loadScenarioFile(broken)).rejects.toThrow(/not valid JSON/);
    await expect(loadScenarioFile(join(dir, "missing.json"))).rejects.toThrow(/cannot read/);
    expect(() => resolveScenario(join(dir, "missing.json"))).toThrow(/cannot read/);
  });

  it("cycles every 120 s through a spike, an outage, a frozen source and publisher, a paused vault and a funding spike", () => {
    expect(DEMO_SCENARIO.faults.filter((f) => f.repeatEveryMs !== 120_000).map((f) => f.fault.kind)).toEqual([
      "frozenPublisher",
    ]);
    expect(DEMO_SCENARIO.faults.map((f) => f.fault.kind)).toEqual(
      expect.arrayContaining([
        "spike",
        "outage",
        "frozenSource",
        "frozenPublisher",
        "vaultPaused",
        "fundingSpike",
      ]),
    );
    const spike = DEMO_SCENARIO.faults.find((f) => f.fault.kind === "spike")!;
    expect(spike).toMatchObject({
      atMs: 5_000,
      durationMs: 20_000,
      fault: { pair: "BTC/USD", factor: 1.06 },
    });
  });
});

describe("createMarket", () => {
  it("is a pure function of seed and time", () => {
    const a = createMarket(3, createManualClock(T0_MS));
    const b = createMarket(3, createManualClock(T0_MS));
    const btcA = a.pairs.get("BTC/USD")!;
    const btcB = b.pairs.get("BTC/USD")!;
    expect(baseMid(a, btcA, T0_MS)).toBeCloseTo(82_069.27, 6);
    for (const offsetMs of [-86_400_000, -1_000, 100, 3_600_000]) {
      expect(baseMid(a, btcA, T0_MS + offsetMs)).toBe(baseMid(b, btcB, T0_MS + offsetMs));
    }
    const c = createMarket(4, createManualClock(T0_MS));
    expect(baseMid(c, c.pairs.get("BTC/USD")!, T0_MS + 3_600_000)).not.toBe(
      baseMid(a, btcA, T0_MS + 3_600_000),
    );
  });

  it("moves like a random walk: small 1-minute moves, larger daily ones", () => {
    const market = createMarket(11, createManualClock(T0_MS));
    const btc = market.pairs.get("BTC/USD")!;
    const moves = (horizonMs: number): number => {
      let sum = 0;
      for (let i = 0; i < 200; i++) {
        const fromMs = T0_MS + i * 7_777_777;
        sum += Math.log(baseMid(market, btc, fromMs + horizonMs) / baseMid(market, btc, fromMs)) ** 2;
      }
      return Math.sqrt(sum / 200);
    };
    expect(moves(60_000)).toBeLessThan(0.005);
    expect(moves(86_400_000)).toBeGreaterThan(moves(60_000) * 3);
    expect(moves(86_400_000)).toBeLessThan(0.15);
  });
});
