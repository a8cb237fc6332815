// The rule registry: every configurable rule kind, one file each, keyed by kind and checked for exhaustiveness by the compiler.
import type { AlertLabels, RuleKind } from "../events.js";
import { componentDeviation, type ComponentDeviationRule } from "./component-deviation.js";
import { UNKNOWN_KEY, type RestoredKey, type RuleDefinition } from "./definition.js";
import { fundingRate, type FundingRateRule } from "./funding-rate.js";
import { lowSources, type LowSourcesRule } from "./low-sources.js";
import { onchainOffchainDeviation, type OnchainOffchainDeviationRule } from "./onchain-offchain-deviation.js";
import { priceChange, type PriceChangeRule } from "./price-change.js";
import { priceLevel, type PriceLevelRule } from "./price-level.js";
import { publisherMissing, type PublisherMissingRule } from "./publisher-missing.js";
import { publisherStale, type PublisherStaleRule } from "./publisher-stale.js";
import { stalePrice, type StalePriceRule } from "./stale-price.js";
import { marketMove, type MarketMoveRule } from "./market-move.js";
import { publisherOutage, type PublisherOutageRule } from "./publisher-outage.js";
import { sourceDeviation, type SourceDeviationRule } from "./source-deviation.js";
import { upstreamDown, type UpstreamDownRule } from "./upstream-down.js";
import { upstreamError, type UpstreamErrorRule } from "./upstream-error.js";
import { variation, type VariationRule } from "./variation.js";
import { vaultSharePrice, type VaultSharePriceRule } from "./vault-share-price.js";
import { vaultStatus, type VaultStatusRule } from "./vault-status.js";

export type { Market, RuleCommon, RuleOverride } from "./common.js";
export type { CauseContext, CauseFinding, DetectContext, RestoredKey, RuleDefinition } from "./definition.js";

/** One configured rule: the union of the kinds' config types. */
export type RuleConfig =
  | PriceChangeRule
  | PriceLevelRule
  | VariationRule
  | StalePriceRule
  | LowSourcesRule
  | ComponentDeviationRule
  | OnchainOffchainDeviationRule
  | PublisherStaleRule
  | PublisherMissingRule
  | FundingRateRule
  | VaultStatusRule
  | VaultSharePriceRule
  | UpstreamErrorRule
  | UpstreamDownRule
  | PublisherOutageRule
  | SourceDeviationRule
  | MarketMoveRule;

export type RuleConfigKind = RuleConfig["kind"];

/** The config of one rule kind. */
export type RuleOf<K extends RuleConfigKind> = Extract<RuleConfig, { kind: K }>;

/** Every rule kind's definition; the order is the order kinds are listed in (events, metrics, docs). */
export const RULES = {
  price_change: priceChange,
  price_level: priceLevel,
  variation,
  stale_price: stalePrice,
  low_sources: lowSources,
  component_deviation: componentDeviation,
  onchain_offchain_deviation: onchainOffchainDeviation,
  publisher_stale: publisherStale,
  publisher_missing: publisherMissing,
  funding_rate: fundingRate,
  vault_status: vaultStatus,
  vault_share_price: vaultSharePrice,
  upstream_error: upstreamError,
  upstream_down: upstreamDown,
  publisher_outage: publisherOutage,
  source_deviation: sourceDeviation,
  market_move: marketMove,
} as const satisfies { readonly [K in RuleConfigKind]: RuleDefinition<RuleOf<K>> };

/** The configurable rule kinds, in registry order. */
export const RULE_CONFIG_KINDS = Object.keys(RULES) as readonly RuleConfigKind[];

/** The definition of a rule's kind. */
export function definitionOf<R extends RuleConfig>(rule: R): RuleDefinition<R> {
  // RULES[rule.kind] is the definition of R's kind (the satisfies clause above); the compiler cannot correlate the two.
  return RULES[rule.kind] as unknown as RuleDefinition<R>;
}

/** Labels contributed by the rule itself: the window of windowed rules and `rule_id` when it differs from the kind. */
export function ruleLabels(rule: RuleConfig): AlertLabels {
  const labels: Record<string, string> = {};
  const window = definitionOf(rule).windowLabel(rule);
  if (window !== undefined) labels["window"] = window;
  if (rule.id !== rule.kind) labels["rule_id"] = rule.id;
  return labels;
}

/** Whether `kind` is a configurable rule kind (not one the daemon raises itself: sink_error, watchdog, monitor_stalled). */
export function isRuleConfigKind(kind: RuleKind): kind is RuleConfigKind {
  return Object.hasOwn(RULES, kind);
}

/** Whether alerts of `kind` mute the other alerts of their targets while firing (upstream_error's definition says so). */
export function inhibitsOthers(kind: RuleKind): boolean {
  return isRuleConfigKind(kind) && RULES[kind].inhibits;
}

/** Whether `kind` is a cause rule (its input is other alerts; its alerts are parents, never tied to a target). */
export function isCauseKind(kind: RuleKind): boolean {
  return isRuleConfigKind(kind) && RULES[kind].cause !== null;
}

/** The scope key and targets an announced alert of `kind` names in its labels (unknown for daemon-raised kinds). */
export function restoredKeyOf(kind: RuleKind, labels: AlertLabels): RestoredKey {
  return isRuleConfigKind(kind) ? RULES[kind].restoredKey(labels) : UNKNOWN_KEY;
}
