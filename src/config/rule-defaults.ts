// Per-kind rule defaults: threshold unit and value, severity and `for`, chosen from the API's real behaviour.
import type { Severity } from "../domain/events.js";
import type { Market, RuleConfigKind } from "../domain/rules/index.js";

/** What a rule's threshold measures, which fixes its valid range. */
export type ThresholdUnit = "fraction" | "ms" | "count" | "price" | "unused";

/** Defaults of one rule kind; `threshold` undefined = the user must set it. */
export interface RuleKindDefaults {
  readonly unit: ThresholdUnit;
  /** Default threshold per market (same value for both when the rule has no market). */
  readonly threshold: ((market: Market) => number) | undefined;
  /** True when the rule fires at or below the threshold (clearThreshold must then be ≥ threshold). */
  readonly firesBelow: boolean;
  readonly severity: Severity;
  readonly forMs: number;
  /**
   * Default clearThreshold as a multiple of the threshold (1 = none). Measured values that hover at the
   * threshold (moves, deviations, rates) get a band so they fire and resolve once, not on every poll;
   * ages reset to ~0 on fresh data and counts are integers, so those need none; a price level's band
   * depends on the market and is left to the user.
   */
  readonly clearFactor: number;
  /** How the threshold reads for this kind (docs and messages). */
  readonly thresholdDoc: string;
}

const MINUTE = 60_000;
const fixed = (value: number) => () => value;
/** Default hysteresis of measured fractions: 2 % fires, back below 1.5 % resolves. */
const BAND = 0.75;

/** Defaults by kind. Reasons: off-chain data is fresh for 60 s, on-chain feeds are pushed ~60 s or on a
 * 2.5 % move, publisher stats are cached ~20 min upstream, funding rates are fractions per hour. */
export const RULE_DEFAULTS: Readonly<Record<RuleConfigKind, RuleKindDefaults>> = {
  price_change: {
    unit: "fraction",
    threshold: fixed(0.02),
    firesBelow: false,
    severity: "warning",
    forMs: 0,
    clearFactor: BAND,
    thresholdDoc: "|relative move| over windowMs, as a fraction (0.02 = 2 %)",
  },
  price_level: {
    unit: "price",
    threshold: undefined,
    firesBelow: false,
    severity: "warning",
    forMs: 0,
    clearFactor: 1,
    thresholdDoc: "the price level (quote units, e.g. 100000 for BTC/USD)",
  },
  variation: {
    unit: "fraction",
    threshold: fixed(0.05),
    firesBelow: false,
    severity: "warning",
    forMs: 0,
    clearFactor: BAND,
    thresholdDoc: "|on-chain variations[window]| as a fraction",
  },
  stale_price: {
    unit: "ms",
    threshold: (market) => (market === "onchain" ? 5 * MINUTE : MINUTE),
    firesBelow: false,
    severity: "critical",
    forMs: 0,
    clearFactor: 1,
    thresholdDoc: "age of the latest price in ms (default 60 s off-chain, 5 min on-chain)",
  },
  low_sources: {
    unit: "count",
    threshold: fixed(2),
    firesBelow: true,
    severity: "warning",
    forMs: 10_000,
    clearFactor: 1,
    thresholdDoc: "fires when the number of aggregated sources is ≤ this count",
  },
  component_deviation: {
    unit: "fraction",
    threshold: (market) => (market === "onchain" ? 0.03 : 0.01),
    firesBelow: false,
    severity: "warning",
    forMs: 30_000,
    clearFactor: BAND,
    thresholdDoc:
      "a source/publisher's distance from the aggregate, as a fraction (1 % off-chain, 3 % on-chain)",
  },
  onchain_offchain_deviation: {
    unit: "fraction",
    threshold: fixed(0.03),
    firesBelow: false,
    severity: "critical",
    forMs: MINUTE,
    clearFactor: BAND,
    thresholdDoc: "|on-chain − off-chain| / off-chain as a fraction (above the 2.5 % push deviation)",
  },
  publisher_stale: {
    unit: "ms",
    threshold: fixed(30 * MINUTE),
    firesBelow: false,
    severity: "warning",
    forMs: 0,
    clearFactor: 1,
    thresholdDoc: "ms since the publisher (or feed) last updated (upstream caches stats ~20 min)",
  },
  publisher_missing: {
    unit: "unused",
    threshold: fixed(0),
    firesBelow: false,
    severity: "warning",
    forMs: MINUTE,
    clearFactor: 1,
    thresholdDoc: "unused (fires when an expected publisher is absent)",
  },
  funding_rate: {
    unit: "fraction",
    threshold: fixed(0.001),
    firesBelow: false,
    severity: "warning",
    forMs: 0,
    clearFactor: BAND,
    thresholdDoc: "|hourly funding rate| as a fraction per hour (0.001 = 0.1 %/h ≈ 876 %/year)",
  },
  vault_status: {
    unit: "unused",
    threshold: fixed(0),
    firesBelow: false,
    severity: "critical",
    forMs: 0,
    clearFactor: 1,
    thresholdDoc: "unused (fires when status is not live or deposits are paused)",
  },
  vault_share_price: {
    unit: "fraction",
    threshold: fixed(0.01),
    firesBelow: false,
    severity: "critical",
    forMs: 0,
    clearFactor: BAND,
    thresholdDoc: "share-price drop over windowMs as a fraction",
  },
  upstream_error: {
    unit: "count",
    threshold: fixed(3),
    firesBelow: false,
    severity: "critical",
    forMs: 0,
    clearFactor: 1,
    thresholdDoc: "consecutive failed polls of a target",
  },
};

/** Alertmanager-like lifecycle defaults shared by every kind. */
export const LIFECYCLE_DEFAULTS = {
  minFiringMs: 0,
  repeatIntervalMs: 4 * 60 * MINUTE,
  flapWindowMs: 10 * MINUTE,
  flapMaxTransitions: 6,
} as const;

/** Valid threshold range per unit. */
export const THRESHOLD_RANGE: Readonly<
  Record<ThresholdUnit, { min: number; max: number; minExclusive: boolean; integer: boolean }>
> = {
  fraction: { min: 0, max: 1, minExclusive: true, integer: false },
  ms: { min: 1, max: 7 * 24 * 60 * MINUTE, minExclusive: false, integer: true },
  count: { min: 0, max: 1_000, minExclusive: false, integer: true },
  price: { min: 0, max: 1e15, minExclusive: true, integer: false },
  unused: { min: 0, max: 1e15, minExclusive: false, integer: false },
};
