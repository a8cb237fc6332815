// Dispatch from a rule config to its detector: one exhaustive switch over every rule kind.
import type { RuleConfig } from "../rules/index.js";
import type { TargetData } from "../target-state.js";
import { detectComponentDeviation } from "./component-deviation.js";
import type { Finding, QuietKeys } from "./finding.js";
import { detectFundingRate } from "./funding-rate.js";
import { detectLowSources } from "./low-sources.js";
import { detectOnchainOffchainDeviation } from "./onchain-offchain-deviation.js";
import { detectPriceChange } from "./price-change.js";
import { detectPriceLevel } from "./price-level.js";
import { detectPublisherMissing } from "./publisher-missing.js";
import { detectPublisherStale } from "./publisher-stale.js";
import { detectStalePrice } from "./stale-price.js";
import { detectUpstreamError } from "./upstream-error.js";
import { detectVariation } from "./variation.js";
import { detectVaultSharePrice } from "./vault-share-price.js";
import { detectVaultStatus } from "./vault-status.js";

export type { Description, Finding, Measure, NoData, QuietKeys } from "./finding.js";

/** Rules whose verdict changes with time alone (re-evaluated on every tick, and on failed polls). */
export function isTimeDriven(rule: RuleConfig): boolean {
  return rule.kind === "stale_price" || rule.kind === "publisher_stale";
}

/** Run the detector of `rule` on a target; `offchainSpot` is the same pair's off-chain spot target, if any; `quiet` lets hot detectors leave out measures that cannot change anything. */
export function runDetector(
  rule: RuleConfig,
  data: TargetData,
  offchainSpot: TargetData | undefined,
  nowMs: number,
  quiet?: QuietKeys,
): readonly Finding[] {
  switch (rule.kind) {
    case "price_change":
      return detectPriceChange(data, rule, nowMs, quiet);
    case "price_level":
      return detectPriceLevel(data, rule, nowMs);
    case "variation":
      return detectVariation(data, rule, nowMs);
    case "stale_price":
      return detectStalePrice(data, rule, nowMs, quiet);
    case "low_sources":
      return detectLowSources(data, rule, nowMs, quiet);
    case "component_deviation":
      return detectComponentDeviation(data, rule, nowMs, quiet);
    case "onchain_offchain_deviation":
      return detectOnchainOffchainDeviation(data, offchainSpot, rule, nowMs);
    case "publisher_stale":
      return detectPublisherStale(data, rule, nowMs);
    case "publisher_missing":
      return detectPublisherMissing(data, rule, nowMs);
    case "funding_rate":
      return detectFundingRate(data, rule, nowMs);
    case "vault_status":
      return detectVaultStatus(data, rule, nowMs);
    case "vault_share_price":
      return detectVaultSharePrice(data, rule, nowMs);
    case "upstream_error":
      return detectUpstreamError(data, rule, nowMs, quiet);
  }
}
