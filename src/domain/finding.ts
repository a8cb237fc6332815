// What a detector reports: a measured value with its fire/clear verdicts, or "no data" (keep alert state).
import type { AlertContext, AlertLabels, Severity } from "./events.js";
import { crossesClear, crossesFire, type RuleSettings } from "./rule-scope.js";

/** Human text and context of a finding, built only when an alert is announced. */
export interface Description {
  readonly summary: string;
  readonly context: AlertContext;
}

/** A measurement for one alert key of a rule on a target. */
export interface Measure {
  readonly kind: "measure";
  /** Distinguishes alerts of one rule on one target (a source, a publisher); "" for the target itself. */
  readonly subKey: string;
  /** The key the rule's `pairs` filter and overrides used (pair, publisher, vault, target id). */
  readonly scopeKey: string;
  /** Labels added to the target's labels for this key (source, publisher, ...). */
  readonly extraLabels: AlertLabels | null;
  readonly value: number | null;
  readonly threshold: number | null;
  readonly severity: Severity;
  /** The value crosses the fire threshold. */
  readonly fires: boolean;
  /** The value is back past the clear threshold: a firing alert may resolve. */
  readonly clears: boolean;
  /** A second target the finding depends on (the off-chain side of a cross-market deviation). */
  readonly relatedTargetId: string | null;
  readonly describe: () => Description;
}

/** Input missing, failed or not comparable: never a verdict, the alert keeps its state. */
export interface NoData {
  readonly kind: "no_data";
  readonly reason: string;
}

export type Finding = Measure | NoData;

/** A one-element "no data" result; rule files build theirs once, as module constants, so the hot path does not allocate. */
export function noData(reason: string): readonly Finding[] {
  return Object.freeze([Object.freeze({ kind: "no_data" as const, reason })]);
}

/** Inputs of a threshold measurement: the magnitude is compared, the value is reported. */
export interface ThresholdInput {
  readonly subKey: string;
  readonly scopeKey: string;
  readonly extraLabels: AlertLabels | null;
  readonly magnitude: number;
  readonly value: number;
  readonly settings: RuleSettings;
  readonly relatedTargetId?: string;
  readonly describe: () => Description;
}

/** A measurement judged against the settings' fire and clear thresholds (non-finite magnitude never fires nor clears). */
export function thresholdMeasure(input: ThresholdInput): Measure {
  const finite = Number.isFinite(input.magnitude);
  return {
    kind: "measure",
    subKey: input.subKey,
    scopeKey: input.scopeKey,
    extraLabels: input.extraLabels,
    value: input.value,
    threshold: input.settings.threshold,
    severity: input.settings.severity,
    fires: finite && crossesFire(input.magnitude, input.settings),
    clears: finite && crossesClear(input.magnitude, input.settings),
    relatedTargetId: input.relatedTargetId ?? null,
    describe: input.describe,
  };
}

/** A yes/no condition reported as value 1 (fires) or 0 (clears) against threshold 1. */
export function booleanMeasure(
  input: Omit<ThresholdInput, "magnitude" | "value" | "settings"> & {
    readonly active: boolean;
    readonly severity: Severity;
  },
): Measure {
  return {
    kind: "measure",
    subKey: input.subKey,
    scopeKey: input.scopeKey,
    extraLabels: input.extraLabels,
    value: input.active ? 1 : 0,
    threshold: 1,
    severity: input.severity,
    fires: input.active,
    clears: !input.active,
    relatedTargetId: input.relatedTargetId ?? null,
    describe: input.describe,
  };
}
