// Settings every rule kind shares: identity, severity, thresholds, lifecycle timing and scope.
import type { Severity } from "../events.js";

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

/** The market a price rule watches. */
export type Market = "offchain" | "onchain";
