// stale_price: age of the latest price, measured from the price's own timestamp, against a threshold in ms.
import { formatDurationMs, toIso } from "../format.js";
import { crossesFire, settingsFor, targetScopeKey } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import {
  NO_FINDINGS,
  noData,
  thresholdMeasure,
  type Finding,
  type QuietKeys,
  type RuleOf,
} from "./finding.js";

/** ageMs = now − price timestamp ≥ threshold; evaluated on every tick so the age keeps growing without new data. */
export function detectStalePrice(
  data: TargetData,
  rule: RuleOf<"stale_price">,
  nowMs: number,
  quiet?: QuietKeys,
): readonly Finding[] {
  const price = data.price;
  if (price === null || !Number.isFinite(data.priceTimestampMs)) return noData("no price yet");
  const ageMs = nowMs - data.priceTimestampMs;
  const key = quiet === undefined ? targetScopeKey(data.spec) : quiet.scopeKey;
  const settings = quiet === undefined ? settingsFor(rule, key) : quiet.settings;
  const timestampMs = data.priceTimestampMs;
  // Not firing and no alert record: the measure could change nothing, so nothing is allocated.
  if (quiet !== undefined && !crossesFire(ageMs, settings) && quiet.isQuiet("")) return NO_FINDINGS;
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
