// Element reader for the `rules` array: strict keys, per-kind defaults, hysteresis checks and unique ids.
import { SEVERITIES } from "../domain/events.js";
import type { Market, RuleCommon, RuleConfig, RuleConfigKind, RuleOverride } from "../domain/rules/index.js";
import type { ElementReader } from "./element-reader.js";
import { readElements, reportDuplicates, type ReaderContext } from "./element-reader.js";
import { ID_PATTERN, normalisePair, PAIR_PATTERN } from "./checks.js";
import {
  LIFECYCLE_DEFAULTS,
  RULE_DEFAULTS,
  THRESHOLD_RANGE,
  type RuleKindDefaults,
} from "./rule-defaults.js";

/** Rule kinds a config may declare (sink_error is raised internally, not configured). */
export const CONFIG_RULE_KINDS = Object.keys(RULE_DEFAULTS) as RuleConfigKind[];

const WEEK_MS = 7 * 86_400_000;
const MARKETS: readonly Market[] = ["offchain", "onchain"];

/** Read the `rules` array: each element validated strictly and completed with its kind's defaults. */
export function readRules(raw: unknown, path: string, ctx: ReaderContext): RuleConfig[] {
  const rules = readElements(raw, path, ctx, readRule).filter((r): r is RuleConfig => r !== undefined);
  reportDuplicates(
    rules,
    path,
    ctx,
    (r) => r.id,
    ".id",
    (id, first) => `duplicate id "${id}" (also ${first}); give each rule a distinct id`,
  );
  return rules;
}

/** Read one rule element (undefined when its kind is unusable, after reporting it). */
export function readRule(r: ElementReader): RuleConfig | undefined {
  const kind = r.oneOf("kind", CONFIG_RULE_KINDS, { doc: "Rule kind (see the table per kind)." });
  if (!r.isObject || !CONFIG_RULE_KINDS.includes(r.peek("kind") as RuleConfigKind)) {
    r.abandon(); // the element's other keys cannot be judged without a valid kind
    return undefined;
  }
  const defaults = RULE_DEFAULTS[kind];
  const market = hasMarket(kind)
    ? r.oneOf("market", MARKETS, { doc: "Which price the rule watches.", default: "offchain" })
    : "offchain";
  const common = readCommon(r, kind, defaults, market);
  const base = { kind, ...common };
  switch (kind) {
    case "price_change":
      return {
        ...base,
        kind,
        market,
        windowMs: windowMs(r, 60_000, "Local window the move is measured over."),
      };
    case "price_level": {
      const direction = r.oneOf("direction", ["above", "below"] as const, {
        doc: "Fire when the price is above or below the level.",
      });
      checkHysteresis(r, common, direction === "below");
      return { ...base, kind, market, direction };
    }
    case "variation":
      return {
        ...base,
        kind,
        window: r.oneOf("window", ["1h", "1d", "1w"] as const, { doc: "Variation key.", default: "1h" }),
      };
    case "stale_price":
    case "low_sources":
    case "component_deviation":
      return { ...base, kind, market };
    case "onchain_offchain_deviation":
      return {
        ...base,
        kind,
        maxAgeMs: r.int("maxAgeMs", {
          doc: "Compare only when both prices are younger than this (ms).",
          default: 120_000,
          min: 1_000,
          max: WEEK_MS,
        }),
      };
    case "publisher_stale":
      return {
        ...base,
        kind,
        perFeed: r.bool("perFeed", {
          doc: "Check each feed of the publisher, not only the publisher.",
          default: false,
        }),
      };
    case "publisher_missing": {
      const publishers = r.stringList("publishers", {
        doc: 'Publishers expected to be present, e.g. ["PRAGMA"].',
        defaultText: "(required)",
      });
      if (r.has("publishers") && publishers.length === 0)
        r.problem("publishers", "must list at least one publisher");
      if (!r.has("publishers")) r.problem("publishers", "required");
      return { ...base, kind, publishers };
    }
    case "vault_share_price":
      return {
        ...base,
        kind,
        windowMs: windowMs(r, 3_600_000, "Window the share-price drop is measured over."),
      };
    case "funding_rate":
    case "vault_status":
    case "upstream_error":
      return { ...base, kind };
  }
}

function hasMarket(kind: RuleConfigKind): boolean {
  return ["price_change", "price_level", "stale_price", "low_sources", "component_deviation"].includes(kind);
}

function windowMs(r: ElementReader, defaultMs: number, doc: string): number {
  return r.int("windowMs", {
    doc: `${doc.replace(/\.$/, "")} (ms).`,
    default: defaultMs,
    min: 1_000,
    max: WEEK_MS,
  });
}

function readCommon(r: ElementReader, kind: RuleConfigKind, d: RuleKindDefaults, market: Market): RuleCommon {
  const before = r.ctx.problems.length;
  const threshold = readThreshold(r, "threshold", kind, d, d.threshold?.(market));
  const thresholdOk = r.ctx.problems.length === before;
  const clearDoc =
    d.clearFactor === 1
      ? "Resolve once back past this (default = threshold)."
      : `Resolve once back past this (hysteresis; default = threshold × ${d.clearFactor}, so the alert does not flap at the threshold).`;
  const common: RuleCommon = {
    id: r.string("id", {
      doc: "Unique rule id (label rule_id when it differs from the kind).",
      default: kind,
      pattern: ID_PATTERN,
      expected: "an id (letters, digits, _ - .)",
    }),
    enabled: r.bool("enabled", { doc: "Whether the rule runs.", default: true }),
    severity: r.oneOf("severity", SEVERITIES, { doc: "Alert severity.", default: d.severity }),
    threshold,
    // With a bad threshold, an unset clearThreshold has no meaningful default: report the threshold only.
    clearThreshold:
      thresholdOk || r.has("clearThreshold")
        ? readThreshold(
            r,
            "clearThreshold",
            kind,
            d,
            defaultClear(threshold, d),
            clearDoc,
            d.clearFactor === 1 ? "= threshold" : `= threshold × ${d.clearFactor}`,
          )
        : threshold,
    forMs: ms(r, "forMs", d.forMs, "Condition must hold this long before firing."),
    minFiringMs: ms(
      r,
      "minFiringMs",
      LIFECYCLE_DEFAULTS.minFiringMs,
      "Minimum time firing before it may resolve.",
    ),
    repeatIntervalMs: ms(
      r,
      "repeatIntervalMs",
      LIFECYCLE_DEFAULTS.repeatIntervalMs,
      "Re-announce a firing alert this often (0 = never).",
    ),
    flapWindowMs: ms(
      r,
      "flapWindowMs",
      LIFECYCLE_DEFAULTS.flapWindowMs,
      "Flap-damping window; a flapping alert held firing resolves once clear this long.",
    ),
    flapMaxTransitions: r.int("flapMaxTransitions", {
      doc: "More condition flips than this within flapWindowMs make the alert flapping: held firing when it clears.",
      default: LIFECYCLE_DEFAULTS.flapMaxTransitions,
      min: 2,
      max: 1_000,
    }),
    pairs: r.stringList("pairs", {
      doc: "Pairs (or publishers / vault ids) the rule applies to; [] = all.",
      item: scopeName,
    }),
    overrides: r.record("overrides", {
      doc: "Per pair (publisher, vault id): {threshold, clearThreshold, severity}; clearThreshold defaults to the override's threshold (× the kind's band, as for the rule).",
      key: scopeName,
      item: (o) => readOverride(o, kind, d),
    }),
  };
  if (kind !== "price_level" && thresholdOk) checkHysteresis(r, common, d.firesBelow);
  return common;
}

function readOverride(o: ElementReader, kind: RuleConfigKind, d: RuleKindDefaults): RuleOverride {
  o.allow("threshold", "clearThreshold", "severity");
  const threshold = o.has("threshold") ? readThreshold(o, "threshold", kind, d, undefined) : undefined;
  const clear = o.has("clearThreshold")
    ? readThreshold(o, "clearThreshold", kind, d, undefined)
    : threshold === undefined
      ? undefined
      : defaultClear(threshold, d);
  return {
    ...(threshold === undefined ? {} : { threshold }),
    ...(clear === undefined ? {} : { clearThreshold: clear }),
    ...(o.has("severity") ? { severity: o.oneOf("severity", SEVERITIES, { doc: "Severity." }) } : {}),
  };
}

function readThreshold(
  r: ElementReader,
  key: "threshold" | "clearThreshold",
  kind: RuleConfigKind,
  d: RuleKindDefaults,
  fallback: number | undefined,
  doc = `Fire at: ${d.thresholdDoc}.`,
  defaultText?: string,
): number {
  const range = THRESHOLD_RANGE[d.unit];
  const min = kind === "upstream_error" ? 1 : range.min;
  const opts = {
    doc,
    min,
    max: range.max,
    ...(fallback === undefined ? {} : { default: fallback }),
    ...(defaultText === undefined ? {} : { defaultText }),
  };
  if (range.integer) return r.int(key, opts);
  const unit = d.unit === "fraction" ? { unit: "a fraction: 0.02 = 2 %" } : {};
  return r.number(key, { ...opts, ...unit, minExclusive: range.minExclusive });
}

/** The clear threshold a rule (or override) gets when it sets none: the kind's band, rounded off float noise. */
function defaultClear(threshold: number, d: RuleKindDefaults): number {
  return d.clearFactor === 1 ? threshold : Number((threshold * d.clearFactor).toPrecision(12));
}

function checkHysteresis(r: ElementReader, rule: RuleCommon, firesBelow: boolean): void {
  const check = (key: string, threshold: number | undefined, clear: number | undefined): void => {
    if (threshold === undefined || clear === undefined) return;
    if (firesBelow && clear < threshold)
      r.problem(key, `must be ≥ threshold (${threshold}) for a rule that fires below it`);
    if (!firesBelow && clear > threshold) r.problem(key, `must be ≤ threshold (${threshold})`);
  };
  check("clearThreshold", rule.threshold, rule.clearThreshold);
  for (const [name, o] of Object.entries(rule.overrides)) {
    check(
      `overrides.${name}.clearThreshold`,
      o.threshold ?? rule.threshold,
      o.clearThreshold ?? rule.clearThreshold,
    );
  }
}

function ms(r: ElementReader, key: string, defaultMs: number, doc: string): number {
  return r.int(key, { doc: `${doc.replace(/\.$/, "")} (ms).`, default: defaultMs, min: 0, max: WEEK_MS });
}

/** Pair-shaped scope names are upper-cased like the server does; publisher and vault names are kept. */
function scopeName(name: string): string {
  return PAIR_PATTERN.test(name) ? normalisePair(name) : name;
}
