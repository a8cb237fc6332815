// What the cause rules' configs share: counts of members, resolved once none is left, and the fraction key.
import { number } from "../fields.js";
import type { RuleKindDefaults } from "./common.js";

/** Defaults of a cause rule: fire at `threshold` members, resolve once none is left. */
export function causeDefaults(threshold: number, thresholdDoc: string): RuleKindDefaults {
  return {
    unit: "count",
    thresholdMin: 1,
    threshold: () => threshold,
    severity: "critical",
    forMs: 0,
    clearFactor: 1,
    clearAt: 1,
    thresholdDoc,
  };
}

/** The key `minFraction`: the fraction of `of` that must be members too (0 = the count alone). */
export function minFraction(defaultFraction: number, of: string) {
  return number({
    doc: `Fire only when at least this fraction of ${of} are members too (0 = the threshold count alone).`,
    default: defaultFraction,
    min: 0,
    max: 1,
    unit: "a fraction: 0.5 = half",
  });
}
