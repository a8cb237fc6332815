// low_sources: the aggregate is built from too few sources (fires when the count is at or below the threshold).
import { toIso } from "../format.js";
import type { ScaledPrice } from "../price.js";
import { crossesFire, settingsFor, targetScopeKey, type RuleSettings } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import {
  NO_FINDINGS,
  noData,
  thresholdMeasure,
  type Finding,
  type Measure,
  type QuietKeys,
  type RuleOf,
} from "./finding.js";

/** numSources ≤ threshold fires; resolves once the count is above the clear threshold. */
export function detectLowSources(
  data: TargetData,
  rule: RuleOf<"low_sources">,
  _nowMs: number,
  quiet?: QuietKeys,
): readonly Finding[] {
  const snapshot = data.snapshot;
  if (snapshot === null || (snapshot.kind !== "offchain" && snapshot.kind !== "onchain"))
    return noData("no price snapshot");
  const count = snapshot.value.numSources;
  if (!Number.isFinite(count)) return noData("source count missing");
  const key = quiet === undefined ? targetScopeKey(data.spec) : quiet.scopeKey;
  const settings = quiet === undefined ? settingsFor(rule, key) : quiet.settings;
  // Not firing and no alert record: the measure could change nothing, so nothing is allocated.
  if (quiet !== undefined && !crossesFire(count, settings) && quiet.isQuiet("")) return NO_FINDINGS;
  return [lowSourcesMeasure(key, rule.market, settings, count, snapshot.value.price, data.observedAtMs)];
}

// The measure and its lazy description, outside the detector so its quiet path allocates no closure
// context (see staleMeasure in stale-price.ts).
function lowSourcesMeasure(
  key: string,
  market: string,
  settings: RuleSettings,
  count: number,
  price: ScaledPrice,
  observedAtMs: number,
): Measure {
  return thresholdMeasure({
    subKey: "",
    scopeKey: key,
    extraLabels: null,
    magnitude: count,
    value: count,
    settings,
    describe: () => ({
      summary: `${key} ${market} price aggregated from ${count} sources (threshold ≤ ${settings.threshold})`,
      context: { numSources: count, price: price.text, observedAt: toIso(observedAtMs) },
    }),
  });
}
