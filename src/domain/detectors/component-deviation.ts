// component_deviation: each off-chain source / on-chain publisher entry against the aggregate price.
import { formatPercent, formatSignedPercent, toIso } from "../format.js";
import { changeProvablyBelow, relativeChange, type ScaledPrice } from "../price.js";
import { settingsFor, targetScopeKey, type RuleSettings } from "../rule-scope.js";
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

/** One finding per component: |component − aggregate| / aggregate ≥ threshold; no components is no data. With `quiet`, calm components of keys without an alert are left out. */
export function detectComponentDeviation(
  data: TargetData,
  rule: RuleOf<"component_deviation">,
  _nowMs: number,
  quiet?: QuietKeys,
): readonly Finding[] {
  const snapshot = data.snapshot;
  if (snapshot === null) return noData("no snapshot");
  const aggregate = data.price;
  if (aggregate === null || !data.priceComparable) return noData("no comparable aggregate");
  const key = quiet === undefined ? targetScopeKey(data.spec) : quiet.scopeKey;
  const settings = quiet === undefined ? settingsFor(rule, key) : quiet.settings;
  const observedAtMs = data.observedAtMs;
  // Calm and alert-free is the steady state: proven on doubles, it costs no bigint division and no allocation.
  const provable = quiet !== undefined && settings.direction === "above";
  const threshold = settings.threshold;
  let findings: Measure[] | null = null;
  let components = 0;
  if (snapshot.kind === "offchain") {
    const list = snapshot.value.components;
    for (let i = 0; i < list.length; i++) {
      const component = list[i]!;
      components++;
      const subKey = component.source;
      if (provable && changeProvablyBelow(aggregate, component.price, threshold) && quiet.isQuiet(subKey))
        continue;
      const labels = { source: component.source };
      (findings ??= []).push(
        deviation(key, subKey, labels, component.price, aggregate, settings, observedAtMs),
      );
    }
  } else if (snapshot.kind === "onchain") {
    const list = snapshot.value.components;
    for (let i = 0; i < list.length; i++) {
      const entry = list[i]!;
      components++;
      const subKey = `${entry.publisher}\u001f${entry.source}`;
      if (provable && changeProvablyBelow(aggregate, entry.price, threshold) && quiet.isQuiet(subKey))
        continue;
      const labels = { publisher: entry.publisher, source: entry.source };
      (findings ??= []).push(deviation(key, subKey, labels, entry.price, aggregate, settings, observedAtMs));
    }
  }
  if (components === 0) return noData("no components");
  return findings === null ? NO_FINDINGS : findings;
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
