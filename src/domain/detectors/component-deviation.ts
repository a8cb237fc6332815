// component_deviation: each off-chain source / on-chain publisher entry against the aggregate price.
import { formatPercent, formatSignedPercent, toIso } from "../format.js";
import { relativeChange, type ScaledPrice } from "../price.js";
import { settingsFor, targetScopeKey, type RuleSettings } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import { noData, thresholdMeasure, type Finding, type Measure, type RuleOf } from "./finding.js";

/** One finding per component: |component − aggregate| / aggregate ≥ threshold; no components is no data. */
export function detectComponentDeviation(
  data: TargetData,
  rule: RuleOf<"component_deviation">,
  _nowMs: number,
): readonly Finding[] {
  const snapshot = data.snapshot;
  if (snapshot === null) return noData("no snapshot");
  const aggregate = data.price;
  if (aggregate === null || !data.priceComparable) return noData("no comparable aggregate");
  const key = targetScopeKey(data.spec);
  const settings = settingsFor(rule, key);
  const observedAtMs = data.observedAtMs;
  const findings: Measure[] = [];
  if (snapshot.kind === "offchain") {
    for (const component of snapshot.value.components) {
      const subKey = component.source;
      const labels = { source: component.source };
      findings.push(deviation(key, subKey, labels, component.price, aggregate, settings, observedAtMs));
    }
  } else if (snapshot.kind === "onchain") {
    for (const entry of snapshot.value.components) {
      const subKey = `${entry.publisher}\u001f${entry.source}`;
      const labels = { publisher: entry.publisher, source: entry.source };
      findings.push(deviation(key, subKey, labels, entry.price, aggregate, settings, observedAtMs));
    }
  }
  return findings.length === 0 ? noData("no components") : findings;
}

function deviation(
  key: string,
  subKey: string,
  labels: Readonly<Record<string, string>>,
  component: ScaledPrice,
  aggregate: ScaledPrice,
  settings: RuleSettings,
  observedAtMs: number,
): Measure {
  const change = relativeChange(aggregate, component) ?? Number.NaN;
  const who = labels["publisher"] ?? labels["source"] ?? subKey;
  return thresholdMeasure({
    subKey,
    scopeKey: key,
    extraLabels: labels,
    magnitude: Math.abs(change),
    value: change,
    settings,
    describe: () => ({
      summary: `${key} ${who} is ${formatSignedPercent(change)} off the aggregate (threshold ${formatPercent(settings.threshold)})`,
      context: { price: component.text, aggregate: aggregate.text, observedAt: toIso(observedAtMs) },
    }),
  });
}
