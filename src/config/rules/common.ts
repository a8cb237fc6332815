// What every rule kind's config shares: identity, severity, thresholds with hysteresis, lifecycle and scope.
import { z } from "zod";
import { SEVERITIES, type Severity } from "../../domain/events.js";
import {
  definitionOf,
  type Market,
  type RuleCommon,
  type RuleConfig,
  type RuleConfigKind,
  type RuleOf,
  type RuleOverride,
} from "../../domain/rules/index.js";
import { ID_PATTERN, normalisePair, PAIR_PATTERN } from "../checks.js";
import { bool, element, int, list, listItem, number, oneOf, record, text } from "../fields.js";

/** What a rule's threshold measures, which fixes its valid range. */
type ThresholdUnit = "fraction" | "ms" | "count" | "price" | "unused";

/** Defaults of one rule kind; `threshold` undefined = the user must set it. */
export interface RuleKindDefaults {
  readonly unit: ThresholdUnit;
  /** Lowest valid threshold when the unit's own minimum is too low for the kind. */
  readonly thresholdMin?: number;
  /** Default threshold per market (same value for both when the rule has no market). */
  readonly threshold: ((market: Market) => number) | undefined;
  readonly severity: Severity;
  readonly forMs: number;
  /**
   * Default clearThreshold as a multiple of the threshold (1 = none). Measured values that hover at the
   * threshold (moves, deviations, rates) get a band so they fire and resolve once, not on every poll;
   * ages reset to ~0 on fresh data and counts are integers, so those need none; a price level's band
   * depends on the market and is left to the user.
   */
  readonly clearFactor: number;
  /**
   * A fixed default clearThreshold (capped at the threshold) instead of the band: cause rules resolve once
   * fewer than this many members are left (1: when none is), so a recovery does not end them member by member.
   */
  readonly clearAt?: number;
  /** How the threshold reads for this kind (docs and messages). */
  readonly thresholdDoc: string;
}

/** One minute in ms (rule defaults are minutes). */
export const MINUTE = 60_000;
const WEEK_MS = 7 * 24 * 60 * MINUTE;

/** Default hysteresis of measured fractions: 2 % fires, back below 1.5 % resolves. */
export const BAND = 0.75;

/** Alertmanager-like lifecycle defaults shared by every kind. */
const LIFECYCLE_DEFAULTS = {
  minFiringMs: 0,
  repeatIntervalMs: 4 * 60 * MINUTE,
  flapWindowMs: 10 * MINUTE,
  flapMaxTransitions: 6,
} as const;

/** Valid threshold range per unit. */
const THRESHOLD_RANGE: Readonly<
  Record<ThresholdUnit, { min: number; max: number; minExclusive: boolean; integer: boolean }>
> = {
  fraction: { min: 0, max: 1, minExclusive: true, integer: false },
  ms: { min: 1, max: WEEK_MS, minExclusive: false, integer: true },
  count: { min: 0, max: 1_000, minExclusive: false, integer: true },
  price: { min: 0, max: 1e15, minExclusive: true, integer: false },
  unused: { min: 0, max: 1e15, minExclusive: false, integer: false },
};

/** The key `market`: which price a rule watches (for the kinds that have both). */
export const market = () =>
  oneOf(["offchain", "onchain"], { doc: "Which price the rule watches.", default: "offchain" });

/** A window in ms, one second to one week. */
export const windowMs = (defaultMs: number, doc: string) =>
  int({ doc: `${doc.replace(/\.$/, "")} (ms).`, default: defaultMs, min: 1_000, max: WEEK_MS });

function ms(defaultMs: number, doc: string) {
  return int({ doc: `${doc.replace(/\.$/, "")} (ms).`, default: defaultMs, min: 0, max: WEEK_MS });
}

/** A threshold key of this kind's unit; optional (its default is filled once the market is known). */
function threshold(d: RuleKindDefaults, doc: string, defaultText: string) {
  const range = THRESHOLD_RANGE[d.unit];
  const bounds = { doc, defaultText, optional: true, min: d.thresholdMin ?? range.min, max: range.max };
  if (range.integer) return int(bounds);
  const unit = d.unit === "fraction" ? { unit: "a fraction: 0.02 = 2 %" } : {};
  return number({ ...bounds, ...unit, minExclusive: range.minExclusive });
}

/** The clear threshold a rule (or override) gets when it sets none: the kind's band, rounded off float noise. */
function defaultClear(value: number, d: RuleKindDefaults): number {
  if (d.clearAt !== undefined) return Math.min(value, d.clearAt);
  return d.clearFactor === 1 ? value : Number((value * d.clearFactor).toPrecision(12));
}

/** Pair-shaped scope names are upper-cased like the server does; publisher and vault names are kept. */
function scopeName(name: string): string {
  return PAIR_PATTERN.test(name) ? normalisePair(name) : name;
}

/** The keys every rule has, with this kind's defaults and docs. */
function commonShape(kind: RuleConfigKind, d: RuleKindDefaults) {
  const offchainDefault = d.threshold?.("offchain");
  const band =
    d.clearAt !== undefined
      ? `min(threshold, ${d.clearAt})`
      : d.clearFactor === 1
        ? "= threshold"
        : `= threshold × ${d.clearFactor}`;
  const clearDoc =
    d.clearAt !== undefined
      ? `Resolve once fewer than this many are left (default ${d.clearAt}: once none is).`
      : d.clearFactor === 1
        ? "Resolve once back past this (default = threshold)."
        : `Resolve once back past this (hysteresis; default = threshold × ${d.clearFactor}, so the alert does not flap at the threshold).`;
  const override = element({
    threshold: threshold(d, "Threshold for this scope.", "(rule's)"),
    clearThreshold: threshold(d, "Clear threshold for this scope.", "(rule's)"),
    severity: oneOf(SEVERITIES, { doc: "Severity.", defaultText: "(rule's)", optional: true }),
  });
  return {
    kind: z.literal(kind),
    id: text({
      doc: "Unique rule id (label rule_id when it differs from the kind).",
      default: kind,
      pattern: ID_PATTERN,
      expected: "an id (letters, digits, _ - .)",
    }),
    enabled: bool({ doc: "Whether the rule runs.", default: true }),
    severity: oneOf(SEVERITIES, { doc: "Alert severity.", default: d.severity }),
    threshold: threshold(
      d,
      `Fire at: ${d.thresholdDoc}.`,
      offchainDefault === undefined ? "(required)" : String(offchainDefault),
    ),
    clearThreshold: threshold(d, clearDoc, band),
    forMs: ms(d.forMs, "Condition must hold this long before firing."),
    minFiringMs: ms(LIFECYCLE_DEFAULTS.minFiringMs, "Minimum time firing before it may resolve."),
    repeatIntervalMs: ms(
      LIFECYCLE_DEFAULTS.repeatIntervalMs,
      "Re-announce a firing alert this often (0 = never).",
    ),
    flapWindowMs: ms(
      LIFECYCLE_DEFAULTS.flapWindowMs,
      "Flap-damping window; a flapping alert held firing resolves once clear this long.",
    ),
    flapMaxTransitions: int({
      doc: "More condition flips than this within flapWindowMs make the alert flapping: held firing when it clears.",
      default: LIFECYCLE_DEFAULTS.flapMaxTransitions,
      min: 2,
      max: 1_000,
    }),
    pairs: list(listItem().transform(scopeName), {
      doc: "Pairs (or publishers / vault ids) the rule applies to; [] = all.",
    }),
    overrides: record(override, {
      doc: "Per pair (publisher, vault id): {threshold, clearThreshold, severity}; clearThreshold defaults to the override's threshold (× the kind's band, as for the rule).",
    }),
  };
}

type CommonOutput = z.output<z.ZodObject<ReturnType<typeof commonShape>>>;
type Issues = z.core.ParsePayload["issues"];

/** Fill the defaults that depend on other keys (threshold by market, clear thresholds by band). */
function completeCommon(
  raw: CommonOutput & { readonly market?: Market },
  d: RuleKindDefaults,
  issues: Issues,
): RuleCommon | undefined {
  const fire = raw.threshold ?? d.threshold?.(raw.market ?? "offchain");
  if (fire === undefined) {
    issues.push({ code: "custom", path: ["threshold"], message: "required", input: raw });
    return undefined;
  }
  const clear = raw.clearThreshold ?? defaultClear(fire, d);
  const overrides: Record<string, RuleOverride> = {};
  for (const [name, o] of Object.entries(raw.overrides)) {
    const oClear = o.clearThreshold ?? (o.threshold === undefined ? undefined : defaultClear(o.threshold, d));
    overrides[scopeName(name)] = {
      ...(o.threshold === undefined ? {} : { threshold: o.threshold }),
      ...(oClear === undefined ? {} : { clearThreshold: oClear }),
      ...(o.severity === undefined ? {} : { severity: o.severity }),
    };
  }
  return {
    id: raw.id,
    enabled: raw.enabled,
    severity: raw.severity,
    threshold: fire,
    clearThreshold: clear,
    forMs: raw.forMs,
    minFiringMs: raw.minFiringMs,
    repeatIntervalMs: raw.repeatIntervalMs,
    flapWindowMs: raw.flapWindowMs,
    flapMaxTransitions: raw.flapMaxTransitions,
    pairs: raw.pairs,
    overrides,
  };
}

/** Each clear threshold lies on the calm side of its fire threshold; the side is the domain rule's direction. */
function checkHysteresis(rule: RuleConfig, issues: Issues): void {
  const firesBelow = definitionOf(rule).direction(rule) === "below";
  const check = (path: PropertyKey[], t: number, c: number): void => {
    const message =
      firesBelow && c < t
        ? `must be ≥ threshold (${t}) for a rule that fires below it`
        : !firesBelow && c > t
          ? `must be ≤ threshold (${t})`
          : undefined;
    if (message !== undefined) issues.push({ code: "custom", path, message, input: c });
  };
  check(["clearThreshold"], rule.threshold, rule.clearThreshold);
  for (const [name, o] of Object.entries(rule.overrides)) {
    check(
      ["overrides", name, "clearThreshold"],
      o.threshold ?? rule.threshold,
      o.clearThreshold ?? rule.clearThreshold,
    );
  }
}

/**
 * The schema's output fits the domain's RuleOf<K>: it assigns to it and has exactly its keys (a config
 * enum may be narrower than the domain's, e.g. variation windows).
 */
type Fits<O, R> = [O] extends [R]
  ? [keyof O] extends [keyof R]
    ? [keyof R] extends [keyof O]
      ? true
      : false
    : false
  : false;

/** The output of a kind's own keys (none for most kinds). */
type OwnOutput<Own extends z.ZodRawShape> = [keyof Own] extends [never]
  ? Record<never, never>
  : z.output<z.ZodObject<Own>>;

/** One rule kind on the config side: its keys (for the docs), its schema and how its threshold reads. */
export interface RuleConfigDefinition<K extends RuleConfigKind> {
  readonly kind: K;
  readonly shape: z.ZodRawShape;
  readonly schema: z.ZodType<RuleOf<K>>;
  readonly thresholdDoc: string;
}

/**
 * Define a rule kind's config from its own keys and defaults; the common keys come from here. The last
 * parameter exists only when the output does not fit RuleOf<K>, so a drift from the domain fails tsc.
 */
export function defineRuleConfig<K extends RuleConfigKind, Own extends z.ZodRawShape>(
  kind: K,
  d: RuleKindDefaults,
  own: Own,
  ..._fits: Fits<RuleCommon & { kind: K } & OwnOutput<Own>, RuleOf<K>> extends true
    ? []
    : ["the schema's output does not fit RuleOf<K>"]
): RuleConfigDefinition<K> {
  const shape = { ...commonShape(kind, d), ...own };
  // The element's output type is generic in Own here; Fits<…> checks it against RuleOf<K> at each call.
  const schema = element(shape).transform((parsed: unknown, ctx): RuleOf<K> => {
    const raw = parsed as CommonOutput & { readonly market?: Market } & Readonly<Record<string, unknown>>;
    const completed = completeCommon(raw, d, ctx.issues);
    if (completed === undefined) return z.NEVER;
    const ownValues = Object.fromEntries(Object.keys(own).map((key) => [key, raw[key]]));
    const rule = { kind, ...completed, ...ownValues } as RuleOf<K>;
    checkHysteresis(rule, ctx.issues);
    return rule;
  });
  return { kind, shape, schema, thresholdDoc: d.thresholdDoc };
}
