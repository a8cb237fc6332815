// low_sources: the aggregate is built from too few sources (fires when the count is at or below the threshold).
import { noData, thresholdMeasure } from "../finding.js";
import { toIso } from "../format.js";
import { crossesFire } from "../rule-scope.js";
import type { Market, RuleCommon } from "./common.js";
import { defineRule } from "./definition.js";

/** Number of sources aggregated ≤ threshold (fires when the count is at or below it). */
export interface LowSourcesRule extends RuleCommon {
  readonly kind: "low_sources";
  readonly market: Market;
}

const NO_SNAPSHOT = noData("no price snapshot");
const NO_COUNT = noData("source count missing");

/** low_sources on targets of its market: numSources ≤ threshold fires; resolves once above the clear threshold. */
export const lowSources = defineRule<LowSourcesRule>({
  appliesTo: (rule, target) => target.kind === rule.market,
  direction: () => "below",
  keys: "one",
  detect({ target, rule, scopeKey, settings }) {
    const snapshot = target.snapshot;
    if (snapshot === null || (snapshot.kind !== "offchain" && snapshot.kind !== "onchain"))
      return NO_SNAPSHOT;
    const count = snapshot.value.numSources;
    if (!Number.isFinite(count)) return NO_COUNT;
    const price = snapshot.value.price;
    const observedAtMs = target.observedAtMs;
    return [
      thresholdMeasure({
        subKey: "",
        scopeKey,
        extraLabels: null,
        magnitude: count,
        value: count,
        settings,
        describe: () => ({
          summary: `${scopeKey} ${rule.market} price aggregated from ${count} sources (threshold ≤ ${settings.threshold})`,
          context: { numSources: count, price: price.text, observedAt: toIso(observedAtMs) },
        }),
      }),
    ];
  },
  calm({ target, settings }) {
    const snapshot = target.snapshot;
    if (snapshot === null || (snapshot.kind !== "offchain" && snapshot.kind !== "onchain")) return true;
    return !crossesFire(snapshot.value.numSources, settings);
  },
});
