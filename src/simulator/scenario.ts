// Scenario files: validated JSON describing seed, scheduled faults (with repeat cycles) and response-shape flags.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { PmError } from "../domain/errors.js";
import type { Fault } from "./faults.js";
import {
  faultSchema,
  nonNegative,
  numberField,
  parseScenarioJson,
  positive,
  scenarioError,
} from "./fault-parser.js";

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

const msField = numberField("a positive number of ms", positive);
/** An optional number: absent or null both mean "not set". */
const orNull = <T>(schema: z.ZodType<T>) => schema.nullish().transform((value) => value ?? null);

/** A scenario file as written (defaults and the repeat rule are applied by `parseScenario`). */
const SCENARIO_SCHEMA = z.strictObject(
  {
    repeatEveryMs: orNull(msField),
    faults: z
      .array(
        z.strictObject(
          {
            durationMs: orNull(msField),
            repeatEveryMs: orNull(msField),
            fault: faultSchema,
            atMs: numberField("a non-negative number of ms", nonNegative),
          },
          { error: "must be an object" },
        ),
        { error: "must be an array" },
      )
      .default([]),
    vaultEnvelope: z.boolean({ error: "must be a boolean" }).default(false),
    name: z.string({ error: "must be a string" }).default("scenario"),
    seed: orNull(numberField("an integer", Number.isInteger)),
    historyMs: orNull(msField),
  },
  { error: "must be an object" },
);

/** Validate a scenario document; throws PmError(PM_ERR_CONFIG) naming the first bad field. */
export function parseScenario(json: unknown): Scenario {
  const document = parseScenarioJson(SCENARIO_SCHEMA, json, "", "(root)");
  const faults = document.faults.map((entry, index): ScenarioFault => {
    const { atMs, durationMs, fault } = entry;
    const repeatEveryMs = entry.repeatEveryMs ?? document.repeatEveryMs;
    const where = `faults[${index}].durationMs`;
    if (fault.kind === "drift" && durationMs === null) throw scenarioError(where, "is required for a drift");
    if (repeatEveryMs !== null && (durationMs === null || durationMs > repeatEveryMs))
      throw scenarioError(where, "must be set and at most repeatEveryMs when the fault repeats");
    return { atMs, durationMs, repeatEveryMs, fault };
  });
  const { name, seed, vaultEnvelope, historyMs } = document;
  return { name, seed, vaultEnvelope, historyMs, faults };
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
