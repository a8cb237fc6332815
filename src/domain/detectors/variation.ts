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
      describe: () => {
        // With decimals 0 (the server could not read them) the raw integer is no price: say it is unknown.
        const known = snapshot.value.decimalsKnown;
        return {
          summary: `${key} on-chain varied ${formatSignedPercent(variation)} over ${rule.window} (threshold ${formatPercent(settings.threshold)})${known ? "" : "; price unknown (on-chain decimals unreadable)"}`,
          context: { price: known ? snapshot.value.price.text : null, observedAt: toIso(observedAtMs) },
        };
      },
    }),
  ];
}
