// component_deviation: each off-chain source / on-chain publisher entry against the aggregate price.
import { noData, thresholdMeasure, type Finding, type Measure } from "../finding.js";
import { formatPercent, formatSignedPercent, toIso } from "../format.js";
import { changeProvablyBelow, relativeChange, type ScaledPrice } from "../price.js";
import type { RuleSettings } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import type { Market, RuleCommon } from "./common.js";
import { defineRule } from "./definition.js";

/** A source or publisher deviates from the aggregate by ≥ threshold (fraction). */
export interface ComponentDeviationRule extends RuleCommon {
  readonly kind: "component_deviation";
  readonly market: Market;
}

const NO_SNAPSHOT = noData("no snapshot");
const NO_AGGREGATE = noData("no comparable aggregate");
const NO_COMPONENTS = noData("no components");

/** A component of the target's snapshot: its alert subkey, labels and price. */
interface Component {
  readonly subKey: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly price: ScaledPrice;
}

// The components of an off-chain (sources) or on-chain (publisher entries) snapshot; none for other kinds.
function components(target: TargetData): readonly Component[] {
  const snapshot = target.snapshot;
  if (snapshot?.kind === "offchain")
    return snapshot.value.components.map((c) => ({
      subKey: c.source,
      labels: { source: c.source },
      price: c.price,
    }));
  if (snapshot?.kind === "onchain")
    return snapshot.value.components.map((e) => ({
      subKey: `${e.publisher}\u001f${e.source}`,
      labels: { publisher: e.publisher, source: e.source },
      price: e.price,
    }));
  return [];
}

/** component_deviation on targets of its market: one finding per component; no components is no data. */
export const componentDeviation = defineRule<ComponentDeviationRule>({
  appliesTo: (rule, target) => target.kind === rule.market,
  keys: "many",
  detect({ target, scopeKey, settings }) {
    if (target.snapshot === null) return NO_SNAPSHOT;
    const aggregate = target.price;
    if (aggregate === null || !target.priceComparable) return NO_AGGREGATE;
    const list = components(target);
    if (list.length === 0) return NO_COMPONENTS;
    const observedAtMs = target.observedAtMs;
    return list.map((c): Finding => deviation(scopeKey, c, aggregate, settings, observedAtMs));
  },
  // Every component provably within the threshold, on doubles: no bigint division, no allocation.
  calm({ target, settings }) {
    const aggregate = target.price;
    if (aggregate === null || !target.priceComparable) return true;
    if (settings.direction !== "above") return false;
    const snapshot = target.snapshot;
    const list =
      snapshot?.kind === "offchain" || snapshot?.kind === "onchain" ? snapshot.value.components : [];
    for (let i = 0; i < list.length; i++)
      if (!changeProvablyBelow(aggregate, list[i]!.price, settings.threshold)) return false;
    return true;
  },
});

function deviation(
  key: string,
  { subKey, labels, price }: Component,
  aggregate: ScaledPrice,
  settings: RuleSettings,
  observedAtMs: number,
): Measure {
  const change = relativeChange(aggregate, price) ?? Number.NaN;
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
      context: { price: price.text, aggregate: aggregate.text, observedAt: toIso(observedAtMs) },
    }),
  });
}
