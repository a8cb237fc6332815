// A rule's scope and thresholds: the pairs filter, the key a target is filtered by, effective settings per key (overrides, hysteresis), target labels.
import type { AlertLabels, Severity } from "./events.js";
import type { RuleCommon } from "./rules/common.js";
import type { TargetSpec } from "./types.js";

/** Which side of the threshold fires: `above` fires at value ≥ threshold, `below` at value ≤ threshold. */
export type Direction = "above" | "below";

/** Effective thresholds and severity of a rule for one pair / publisher / vault. */
export interface RuleSettings {
  readonly threshold: number;
  readonly clearThreshold: number;
  readonly severity: Severity;
  readonly direction: Direction;
}

/** Shared settings per (rule, direction) for the keys no override names: see sharedSettingsFor (one per evaluator). */
export type SettingsCache = Map<RuleCommon, Partial<Record<Direction, RuleSettings>>>;

/** Thresholds for `key`: overrides replace threshold/clearThreshold/severity; the clear level is clamped into the fire band. */
export function settingsFor(rule: RuleCommon, key: string, direction: Direction): RuleSettings {
  const override = Object.hasOwn(rule.overrides, key) ? rule.overrides[key] : undefined;
  const threshold = override?.threshold ?? rule.threshold;
  // An override of the threshold alone drops the base band: a clear level from another threshold makes no sense.
  const rawClear =
    override?.clearThreshold ??
    (override?.threshold !== undefined ? override.threshold : rule.clearThreshold);
  const clearThreshold =
    direction === "above" ? Math.min(rawClear, threshold) : Math.max(rawClear, threshold);
  return { threshold, clearThreshold, severity: override?.severity ?? rule.severity, direction };
}

/**
 * settingsFor with one shared object per (rule, direction) for the keys no override names (the common case): every
 * target of a rule reads the same settings, so a poll finds them in cache. The cache is the caller's (an evaluator's).
 */
export function sharedSettingsFor(
  cache: SettingsCache,
  rule: RuleCommon,
  key: string,
  direction: Direction,
): RuleSettings {
  if (Object.hasOwn(rule.overrides, key)) return settingsFor(rule, key, direction);
  let byDirection = cache.get(rule);
  if (byDirection === undefined) {
    byDirection = {};
    cache.set(rule, byDirection);
  }
  return (byDirection[direction] ??= settingsFor(rule, key, direction));
}

/** True when `value` crosses the fire threshold. */
export function crossesFire(value: number, settings: RuleSettings): boolean {
  return settings.direction === "above" ? value >= settings.threshold : value <= settings.threshold;
}

/** True when `value` is back past the clear threshold (a firing alert may resolve). */
export function crossesClear(value: number, settings: RuleSettings): boolean {
  return settings.direction === "above" ? value < settings.clearThreshold : value > settings.clearThreshold;
}

/** The pairs filter: empty = everything; otherwise the key (pair, publisher, vault or target id) must be listed. */
export function inScope(rule: RuleCommon, key: string): boolean {
  return rule.pairs.length === 0 || rule.pairs.includes(key);
}

/** The key a target is filtered and overridden by (pair, vault id); publisher rules filter per publisher instead. */
export function targetScopeKey(target: TargetSpec): string {
  switch (target.kind) {
    case "offchain":
    case "onchain":
    case "funding":
      return target.pair;
    case "vault":
      return target.vaultId;
    case "publishers":
      return target.network;
  }
}

/** Labels describing where a target's data comes from (pair, market, network, source, vault). */
export function targetLabels(target: TargetSpec): AlertLabels {
  switch (target.kind) {
    case "offchain":
      return { pair: target.pair, market: "offchain", entry_type: target.entryType };
    case "onchain":
      return { pair: target.pair, market: "onchain", network: target.network };
    case "publishers":
      return { network: target.network, entry_type: target.publisherType.toLowerCase() };
    case "funding":
      return { pair: target.pair, source: target.source };
    case "vault":
      return { vault: target.vaultId };
  }
}
