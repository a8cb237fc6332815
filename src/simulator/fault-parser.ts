// Validation of fault JSON (scenario files and the control endpoint): errors name the offending field.
import { NETWORKS, type Network } from "../domain/types.js";
import { PmError } from "../domain/errors.js";
import type { EndpointKind, Fault } from "./faults.js";

const ENDPOINTS: readonly EndpointKind[] = [
  "pair_price",
  "candlestick",
  "funding_rates",
  "onchain",
  "publishers",
  "vault",
];
const PAIR_RE = /^[A-Z]+\/[A-Z]+$/;

/** A JSON object being validated. */
export type Json = Record<string, unknown>;

/** Shared JSON validation helper (see parseFault). */
export function fail(path: string, reason: string): never {
  throw new PmError("PM_ERR_CONFIG", `scenario ${path}: ${reason}`, { details: { field: path } });
}

/** Shared JSON validation helper (see parseFault). */
export function object(value: unknown, path: string): Json {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(path, "must be an object");
  return value as Json;
}

/** Shared JSON validation helper (see parseFault). */
export function onlyKeys(value: Json, path: string, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) fail(`${path}.${key}`, "unknown field");
}

/** Shared JSON validation helper (see parseFault). */
export function num(
  value: Json,
  key: string,
  path: string,
  check: (n: number) => boolean,
  rule: string,
): number {
  const n = value[key];
  if (typeof n !== "number" || !Number.isFinite(n) || !check(n)) fail(`${path}.${key}`, `must be ${rule}`);
  return n;
}

/** Shared JSON validation helper (see parseFault). */
export function optNum(
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

/** Predicates used in validation rules. */
export const positive = (n: number): boolean => n > 0;
export const nonNegative = (n: number): boolean => n >= 0;

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
