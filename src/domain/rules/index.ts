// Rule configuration types: what each detector checks, its thresholds and its alert lifecycle settings.
import type { Severity } from "../events.js";
import type { Interval } from "../types.js";

/** Per-pair (or per-publisher / per-vault) overrides of a rule's thresholds and severity. */
export interface RuleOverride {
  readonly threshold?: number;
  readonly clearThreshold?: number;
  readonly severity?: Severity;
}

/** Settings every rule has: identity, severity, lifecycle timing and scope. */
export interface RuleCommon {
  /** Unique rule id; defaults to the rule kind. Added as label `rule_id` when it differs from the kind. */
  readonly id: string;
  readonly enabled: boolean;
  readonly severity: Severity;
  /** Fire when the value reaches this (unit per rule: fraction, price, ms, count). */
  readonly threshold: number;
  /** Resolve only once the value is back past this (hysteresis); equals `threshold` when unset. */
  readonly clearThreshold: number;
  /** Condition must hold this long before firing (pending state). */
  readonly forMs: number;
  /** Minimum time an alert stays firing before it may resolve (hold-down). */
  readonly minFiringMs: number;
  /** Re-announce a still-firing alert this often (0 = never). */
  readonly repeatIntervalMs: number;
  /** Flap damping: more than `flapMaxTransitions` fire/resolve flips within `flapWindowMs` holds the alert firing. */
  readonly flapWindowMs: number;
  readonly flapMaxTransitions: number;
  /** Pairs (or publishers / vaults / targets) the rule applies to; empty = all. */
  readonly pairs: readonly string[];
  /** Keyed by pair (or publisher / vault id). */
  readonly overrides: Readonly<Record<string, RuleOverride>>;
}

export type Market = "offchain" | "onchain";

export type RuleConfig =
  /** |relative move| over a local window ≥ threshold (fraction). */
  | (RuleCommon & { readonly kind: "price_change"; readonly windowMs: number; readonly market: Market })
  /** Price crosses a level: threshold is the level as a decimal number; direction says which side fires. */
  | (RuleCommon & {
      readonly kind: "price_level";
      readonly direction: "above" | "below";
      readonly market: Market;
    })
  /** |on-chain `variations[window]`| ≥ threshold (fraction). */
  | (RuleCommon & { readonly kind: "variation"; readonly window: Interval })
  /** Age of the latest price (ms) ≥ threshold. */
  | (RuleCommon & { readonly kind: "stale_price"; readonly market: Market })
  /** Number of sources aggregated ≤ threshold (fires when the count is at or below it). */
  | (RuleCommon & { readonly kind: "low_sources"; readonly market: Market })
  /** A source or publisher deviates from the aggregate by ≥ threshold (fraction). */
  | (RuleCommon & { readonly kind: "component_deviation"; readonly market: Market })
  /** |on-chain − off-chain| / off-chain ≥ threshold, only when both are younger than maxAgeMs. */
  | (RuleCommon & { readonly kind: "onchain_offchain_deviation"; readonly maxAgeMs: number })
  /** Publisher (or each of its feeds when perFeed) not updated for ≥ threshold ms. */
  | (RuleCommon & { readonly kind: "publisher_stale"; readonly perFeed: boolean })
  /** An expected publisher is absent from the publisher list or from a pair's entry set. */
  | (RuleCommon & { readonly kind: "publisher_missing"; readonly publishers: readonly string[] })
  /** |hourly funding rate| ≥ threshold (fraction per hour). */
  | (RuleCommon & { readonly kind: "funding_rate" })
  /** Vault status not `live`, or deposits paused. */
  | (RuleCommon & { readonly kind: "vault_status" })
  /** Share price dropped by ≥ threshold (fraction) over the window. */
  | (RuleCommon & { readonly kind: "vault_share_price"; readonly windowMs: number })
  /** Target failed ≥ threshold consecutive polls. */
  | (RuleCommon & { readonly kind: "upstream_error" });

export type RuleConfigKind = RuleConfig["kind"];

/** The config of one rule kind. */
export type RuleOf<K extends RuleConfigKind> = Extract<RuleConfig, { kind: K }>;
