// stale_price: age of the latest price, measured from the price's own timestamp, against a threshold in ms.
import { formatDurationMs, toIso } from "../format.js";
import { settingsFor, targetScopeKey } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import { noData, thresholdMeasure, type Finding, type RuleOf } from "./finding.js";

/** ageMs = now − price timestamp ≥ threshold; evaluated on every tick so the age keeps growing without new data. */
export function detectStalePrice(
  data: TargetData,
  rule: RuleOf<"stale_price">,
  nowMs: number,
): readonly Finding[] {
  const price = data.price;
  if (price === null || !Number.isFinite(data.priceTimestampMs)) return noData("no price yet");
  const ageMs = nowMs - data.priceTimestampMs;
  const key = targetScopeKey(data.spec);
  const settings = settingsFor(rule, key);
  const timestampMs = data.priceTimestampMs;
  const observedAtMs = data.observedAtMs;
  return [
    thresholdMeasure({
      subKey: "",
      scopeKey: key,
      extraLabels: null,
      magnitude: ageMs,
      value: ageMs,
      settings,
      describe: () => ({
        summary: `${key} ${rule.market} price is ${formatDurationMs(ageMs)} old (threshold ${formatDurationMs(settings.threshold)})`,
        context: {
          ageMs,
          price: price.text,
          timestamp: toIso(timestampMs),
          observedAt: toIso(observedAtMs),
        },
      }),
    }),
  ];
}
