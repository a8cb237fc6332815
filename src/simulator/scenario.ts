// Scenario files: validated JSON describing seed, scheduled faults (with repeat cycles) and response-shape flags.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { NETWORKS, type Network } from "../domain/types.js";
import { PmError } from "../errors.js";
import type { EndpointKind, Fault } from "./faults.js";

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

const ENDPOINTS: readonly EndpointKind[] = [
  "pair_price",
  "candlestick",
  "funding_rates",
  "onchain",
  "publishers",
  "vault",
];
const PAIR_RE = /^[A-Z]+\/[A-Z]+$/;

type Json = Record<string, unknown>;

function fail(path: string, reason: string): never {
  throw new PmError("PM_ERR_CONFIG", `scenario ${path}: ${reason}`, { details: { field: path } });
}

function object(value: unknown, path: string): Json {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(path, "must be an object");
  return value as Json;
}

function onlyKeys(value: Json, path: string, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) fail(`${path}.${key}`, "unknown field");
}

function num(value: Json, key: string, path: string, check: (n: number) => boolean, rule: string): number {
  const n = value[key];
  if (typeof n !== "number" || !Number.isFinite(n) || !check(n)) fail(`${path}.${key}`, `must be ${rule}`);
  return n;
}

function optNum(
  value: Json,
  key: string,
  path: string,
  check: (n: number) => boolean,
  rule: string,
): number | null {
  return value[key] === undefined || value[key] === null ? null : num(value, key, path, check, rule);
}

function str(value: Json, key: string, path: string, allowed?: readonly string[]): string {
  const s = value[key];
  if (typeof s !== "string" || s.length === 0) fail(`${path}.${key}`, "must be a non-empty string");
  if (allowed !== undefined && !allowed.includes(s))
    fail(`${path}.${key}`, `must be one of ${allowed.join(", ")}`);
  return s;
}

function pairField(value: Json, key: string, path: string): string {
  const pair = str(value, key, path);
  if (!PAIR_RE.test(pair)) fail(`${path}.${key}`, 'must be an upper-case pair like "BTC/USD"');
  return pair;
}

const positive = (n: number): boolean => n > 0;
const nonNegative = (n: number): boolean => n >= 0;

/** Optional `pair`/`endpoint` filters shared by transport faults. */
function filters(value: Json, path: string): { endpoint?: EndpointKind; pair?: string } {
  return {
    ...(value["endpoint"] === undefined
      ? {}
      : { endpoint: str(value, "endpoint", path, ENDPOINTS) as EndpointKind }),
    ...(value["pair"] === undefined ? {} : { pair: pairField(value, "pair", path) }),
  };
}

/** Validate one fault object; errors name the offending field under `path`. */
export function parseFault(json: unknown, path = "fault"): Fault {
  const value = object(json, path);
  const kind = str(value, "kind", path);
  const keys = (...extra: string[]): void => onlyKeys(value, path, ["kind", ...extra]);
  switch (kind) {
    case "spike":
    case "drift":
      keys("pair", "factor");
      return {
        kind,
        pair: pairField(value, "pair", path),
        factor: num(value, "factor", path, positive, "a positive number"),
      };
    case "frozenSource":
      keys("source", "pair");
      return {
        kind,
        source: str(value, "source", path),
        ...(value["pair"] === undefined ? {} : { pair: pairField(value, "pair", path) }),
      };
    case "frozenPublisher":
      keys("publisher", "network");
      return {
        kind,
        publisher: str(value, "publisher", path),
        ...(value["network"] === undefined
          ? {}
          : { network: str(value, "network", path, NETWORKS) as Network }),
      };
    case "dropSources": {
      keys("sources", "pair");
      const sources = value["sources"];
      if (!Array.isArray(sources) || sources.length === 0 || !sources.every((s) => typeof s === "string")) {
        fail(`${path}.sources`, "must be a non-empty array of source names");
      }
      return {
        kind,
        sources: sources,
        ...(value["pair"] === undefined ? {} : { pair: pairField(value, "pair", path) }),
      };
    }
    case "outage": {
      keys("status", "endpoint", "pair", "retryAfterS");
      const status = num(
        value,
        "status",
        path,
        (n) => n === 500 || n === 503 || n === 429,
        "one of 500, 503, 429",
      );
      const retryAfterS = optNum(value, "retryAfterS", path, nonNegative, "a non-negative number");
      return {
        kind,
        status: status as 500 | 503 | 429,
        ...filters(value, path),
        ...(retryAfterS === null ? {} : { retryAfterS }),
      };
    }
    case "latency":
      keys("latencyMs", "endpoint", "pair");
      return {
        kind,
        latencyMs: num(value, "latencyMs", path, nonNegative, "a non-negative number"),
        ...filters(value, path),
      };
    case "malformed":
    case "truncated":
      keys("endpoint", "pair");
      return { kind, ...filters(value, path) };
    case "vaultPaused":
      keys("vault");
      return { kind, vault: str(value, "vault", path) };
    case "vaultStatus":
      keys("vault", "status");
      return {
        kind,
        vault: str(value, "vault", path),
        status: str(value, "status", path, ["live", "paused", "retired"]) as "live",
      };
    case "fundingSpike": {
      keys("pair", "source", "factor", "hourlyRate");
      const factor = optNum(value, "factor", path, () => true, "a number");
      const hourlyRate = optNum(value, "hourlyRate", path, () => true, "a number");
      if (factor === null && hourlyRate === null) fail(`${path}.factor`, "factor or hourlyRate is required");
      return {
        kind,
        pair: pairField(value, "pair", path),
        ...(value["source"] === undefined ? {} : { source: str(value, "source", path) }),
        ...(factor === null ? {} : { factor }),
        ...(hourlyRate === null ? {} : { hourlyRate }),
      };
    }
    default:
      return fail(`${path}.kind`, `unknown fault kind "${kind}"`);
  }
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
