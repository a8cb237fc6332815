// Which targets and keys a rule applies to, its effective thresholds per key (overrides, hysteresis) and its labels.
import type { AlertLabels, Severity } from "./events.js";
import { formatWindowMs } from "./format.js";
import type { RuleConfig } from "./rules/index.js";
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

/** The side of the threshold that fires for each rule (low_sources and `price_level below` fire low). */
export function ruleDirection(rule: RuleConfig): Direction {
  if (rule.kind === "low_sources") return "below";
  if (rule.kind === "price_level") return rule.direction;
  return "above";
}

const settingsCache = new WeakMap<RuleConfig, Map<string, RuleSettings>>();

/** Thresholds for `key`: overrides replace threshold/clearThreshold/severity; the clear level is clamped into the fire band. */
export function settingsFor(rule: RuleConfig, key: string): RuleSettings {
  let perKey = settingsCache.get(rule);
  if (perKey === undefined) {
    perKey = new Map();
    settingsCache.set(rule, perKey);
  }
  let settings = perKey.get(key);
  if (settings === undefined) {
    settings = computeSettings(rule, key);
    perKey.set(key, settings);
  }
  return settings;
}

function computeSettings(rule: RuleConfig, key: string): RuleSettings {
  const override = Object.hasOwn(rule.overrides, key) ? rule.overrides[key] : undefined;
  const direction = ruleDirection(rule);
  const threshold = override?.threshold ?? rule.threshold;
  // An override of the threshold alone drops the base band: a clear level from another threshold makes no sense.
  const rawClear =
    override?.clearThreshold ??
    (override?.threshold !== undefined ? override.threshold : rule.clearThreshold);
  const clearThreshold =
    direction === "above" ? Math.min(rawClear, threshold) : Math.max(rawClear, threshold);
  return { threshold, clearThreshold, severity: override?.severity ?? rule.severity, direction };
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
export function inScope(rule: RuleConfig, key: string): boolean {
  return rule.pairs.length === 0 || rule.pairs.includes(key);
}

/** Rules whose `pairs` filter names publishers rather than pairs. */
export function filtersPublishers(rule: RuleConfig): boolean {
  return rule.kind === "publisher_stale" || rule.kind === "publisher_missing";
}

/** Whether `rule` evaluates data of `target` at all (kind and market); key-level filtering is separate. */
export function appliesToTarget(rule: RuleConfig, target: TargetSpec): boolean {
  switch (rule.kind) {
    case "price_change":
    case "price_level":
    case "stale_price":
    case "low_sources":
    case "component_deviation":
      return target.kind === rule.market;
    case "variation":
    case "onchain_offchain_deviation":
      return target.kind === "onchain";
    case "publisher_stale":
      return target.kind === "publishers";
    case "publisher_missing":
      return target.kind === "publishers" || target.kind === "onchain";
    case "funding_rate":
      return target.kind === "funding";
    case "vault_status":
    case "vault_share_price":
      return target.kind === "vault";
    case "upstream_error":
      return true;
  }
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

/** Whether the rule covers the target as a whole: kind, market and (for non-publisher rules) the pairs filter. */
export function coversTarget(rule: RuleConfig, target: TargetSpec): boolean {
  if (!rule.enabled || !appliesToTarget(rule, target)) return false;
  if (filtersPublishers(rule)) return true;
  if (rule.kind === "upstream_error") return upstreamInScope(rule, target);
  return inScope(rule, targetScopeKey(target));
}

/** upstream_error's filter matches the target id, its pair, vault id or network. */
export function upstreamInScope(rule: RuleConfig, target: TargetSpec): boolean {
  return inScope(rule, target.id) || inScope(rule, targetScopeKey(target));
}

/** The override key of upstream_error for a target: the target id when overridden, else its pair / vault. */
export function upstreamOverrideKey(rule: RuleConfig, target: TargetSpec): string {
  return Object.hasOwn(rule.overrides, target.id) ? target.id : targetScopeKey(target);
}

/** Labels describing where a target's data comes from (DESIGN §3 vocabulary). */
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

/** Labels an upstream_error alert carries: the endpoint (target id) plus pair / network / vault. */
export function upstreamLabels(target: TargetSpec): AlertLabels {
  switch (target.kind) {
    case "offchain":
      return { endpoint: target.id, pair: target.pair, market: "offchain" };
    case "onchain":
      return { endpoint: target.id, pair: target.pair, market: "onchain", network: target.network };
    case "publishers":
      return { endpoint: target.id, network: target.network };
    case "funding":
      return { endpoint: target.id, pair: target.pair, source: target.source };
    case "vault":
      return { endpoint: target.id, vault: target.vaultId };
  }
}

/** Labels contributed by the rule itself: the window of windowed rules and `rule_id` when it differs from the kind. */
export function ruleLabels(rule: RuleConfig): AlertLabels {
  const labels: Record<string, string> = {};
  if (rule.kind === "price_change" || rule.kind === "vault_share_price")
    labels["window"] = formatWindowMs(rule.windowMs);
  if (rule.kind === "variation") labels["window"] = rule.window;
  if (rule.id !== rule.kind) labels["rule_id"] = rule.id;
  return labels;
}
