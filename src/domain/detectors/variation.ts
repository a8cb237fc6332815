// variation: the on-chain `variations[window]` fraction the API computes from candle mids.
import { formatPercent, formatSignedPercent, toIso } from "../format.js";
import { settingsFor, targetScopeKey } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import { noData, thresholdMeasure, type Finding, type RuleOf } from "./finding.js";

/** |variations[window]| ≥ threshold; absent (fewer than two candles) is no data. */
export function detectVariation(
  data: TargetData,
  rule: RuleOf<"variation">,
  _nowMs: number,
): readonly Finding[] {
  const snapshot = data.snapshot;
  if (snapshot?.kind !== "onchain") return noData("no on-chain snapshot");
  const variation = snapshot.value.variations[rule.window];
  if (variation === undefined || !Number.isFinite(variation)) return noData("variation absent");
  const key = targetScopeKey(data.spec);
  const settings = settingsFor(rule, key);
  const observedAtMs = data.observedAtMs;
  return [
    thresholdMeasure({
      subKey: "",
      scopeKey: key,
      extraLabels: null,
      magnitude: Math.abs(variation),
      value: variation,
      settings,
      describe: () => ({
        summary: `${key} on-chain varied ${formatSignedPercent(variation)} over ${rule.window} (threshold ${formatPercent(settings.threshold)})`,
        context: { price: snapshot.value.price.text, observedAt: toIso(observedAtMs) },
      }),
    }),
  ];
}
