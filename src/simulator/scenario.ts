// Scenario files: validated JSON describing seed, scheduled faults (with repeat cycles) and response-shape flags.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { PmError } from "../domain/errors.js";
import type { Fault } from "./faults.js";
import { fail, nonNegative, num, object, onlyKeys, optNum, parseFault, positive } from "./fault-parser.js";

export { parseFault } from "./fault-parser.js";

/** A fault scheduled `atMs` after simulator start, lasting `durationMs` (null = forever), repeating every `repeatEveryMs`. */
export interface ScenarioFault {
  readonly atMs: number;
  readonly durationMs: number | null;
  readonly repeatEveryMs: number | null;
  readonly fault: Fault;
}

/** A parsed scenario. */
export interface Scenario {
  readonly name: string;
  /** Overrides the simulator's seed when set. */
  readonly seed: number | null;
  /** Serve vault bodies in the `{status:"ok",data}` envelope instead of the spec's bare object. */
  readonly vaultEnvelope: boolean;
  /** Market history before start (ms); null = default (15 days). */
  readonly historyMs: number | null;
  readonly faults: readonly ScenarioFault[];
}

/** Validate a scenario document; throws PmError(PM_ERR_CONFIG) naming the first bad field. */
export function parseScenario(json: unknown): Scenario {
  const root = object(json, "(root)");
  onlyKeys(root, "(root)", ["name", "seed", "repeatEveryMs", "vaultEnvelope", "historyMs", "faults"]);
  const defaultRepeatMs = optNum(root, "repeatEveryMs", "(root)", positive, "a positive number of ms");
  const rawFaults = root["faults"] ?? [];
  if (!Array.isArray(rawFaults)) fail("faults", "must be an array");
  const faults = rawFaults.map((raw: unknown, index): ScenarioFault => {
    const path = `faults[${index}]`;
    const entry = object(raw, path);
    onlyKeys(entry, path, ["atMs", "durationMs", "repeatEveryMs", "fault"]);
    const durationMs = optNum(entry, "durationMs", path, positive, "a positive number of ms");
    const repeatEveryMs =
      optNum(entry, "repeatEveryMs", path, positive, "a positive number of ms") ?? defaultRepeatMs;
    const fault = parseFault(entry["fault"], `${path}.fault`);
    if (fault.kind === "drift" && durationMs === null) fail(`${path}.durationMs`, "is required for a drift");
    if (repeatEveryMs !== null && (durationMs === null || durationMs > repeatEveryMs)) {
      fail(`${path}.durationMs`, "must be set and at most repeatEveryMs when the fault repeats");
    }
    return {
      atMs: num(entry, "atMs", path, nonNegative, "a non-negative number of ms"),
      durationMs,
      repeatEveryMs,
      fault,
    };
  });
  const vaultEnvelope = root["vaultEnvelope"] ?? false;
  if (typeof vaultEnvelope !== "boolean") fail("vaultEnvelope", "must be a boolean");
  const name = root["name"] ?? "scenario";
  if (typeof name !== "string") fail("name", "must be a string");
  return {
    name,
    seed: optNum(root, "seed", "(root)", Number.isInteger, "an integer"),
    vaultEnvelope,
    historyMs: optNum(root, "historyMs", "(root)", positive, "a positive number of ms"),
    faults,
  };
}

/** Read and validate a scenario JSON file. */
export async function loadScenarioFile(path: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (cause) {
    throw new PmError("PM_ERR_CONFIG", `cannot read scenario file ${path}`, {
      cause,
      details: { field: "scenario" },
    });
  }
  return parseScenarioText(text, path);
}

/** Resolve the config's scenario setting synchronously: "demo" = DEMO_SCENARIO, anything else a file path. */
export function resolveScenario(spec: string): Scenario {
  if (spec === "demo") return DEMO_SCENARIO;
  let text: string;
  try {
    text = readFileSync(spec, "utf8");
  } catch (cause) {
    throw new PmError("PM_ERR_CONFIG", `cannot read scenario file ${spec}`, {
      cause,
      details: { field: "scenario" },
    });
  }
  return parseScenarioText(text, spec);
}

function parseScenarioText(text: string, path: string): Scenario {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new PmError("PM_ERR_CONFIG", `scenario file ${path} is not valid JSON`, {
      cause,
      details: { field: "scenario" },
    });
  }
  return parseScenario(json);
}

/**
 * The scenario `npm start` runs: every 120 s a cycle of faults that fire and resolve the default rules within
 * seconds. Durations are sized to the default poll periods and thresholds (config/default.json).
 */
export const DEMO_SCENARIO: Scenario = parseScenario({
  name: "demo",
  repeatEveryMs: 120_000,
  faults: [
    { atMs: 5_000, durationMs: 20_000, fault: { kind: "spike", pair: "BTC/USD", factor: 1.06 } },
    { atMs: 15_000, durationMs: 40_000, fault: { kind: "vaultPaused", vault: "pragma-btc-vault" } },
    {
      atMs: 30_000,
      durationMs: 15_000,
      fault: { kind: "outage", endpoint: "pair_price", pair: "ETH/USD", status: 503, retryAfterS: 1 },
    },
    // A frozen source only shows while the market moves away from it: SOL drifts +1.5 % meanwhile.
    { atMs: 45_000, durationMs: 30_000, fault: { kind: "frozenSource", pair: "SOL/USD", source: "BINANCE" } },
    { atMs: 45_000, durationMs: 30_000, fault: { kind: "drift", pair: "SOL/USD", factor: 1.015 } },
    // publisher_stale needs > 120 s without a push, longer than the 120 s cycle: this one cycles every 240 s.
    {
      atMs: 50_000,
      durationMs: 170_000,
      repeatEveryMs: 240_000,
      fault: { kind: "frozenPublisher", publisher: "FOURLEAF" },
    },
    {
      atMs: 60_000,
      durationMs: 40_000,
      fault: { kind: "fundingSpike", pair: "BTC/USD", source: "HYPERLIQUID", hourlyRate: 0.001 },
    },
    { atMs: 80_000, durationMs: 20_000, fault: { kind: "drift", pair: "ETH/USD", factor: 0.96 } },
  ],
});
