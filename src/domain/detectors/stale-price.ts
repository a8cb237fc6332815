// stale_price: age of the latest price, measured from the price's own timestamp, against a threshold in ms.
import { formatDurationMs, toIso } from "../format.js";
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
  return [staleMeasure(key, rule.market, settings, ageMs, price, timestampMs, data.observedAtMs)];
}

// The measure and its lazy description. A separate function on purpose: variables captured by a closure
// live in a context object that V8 allocates on every call of the function declaring them, so the
// detector itself captures nothing and its quiet path allocates nothing.
function staleMeasure(
  key: string,
  market: string,
  settings: RuleSettings,
  ageMs: number,
  price: ScaledPrice,
  timestampMs: number,
  observedAtMs: number,
): Measure {
  return thresholdMeasure({
    subKey: "",
    scopeKey: key,
    extraLabels: null,
    magnitude: ageMs,
    value: ageMs,
    settings,
    describe: () => ({
      summary: `${key} ${market} price is ${formatDurationMs(ageMs)} old (threshold ${formatDurationMs(settings.threshold)})`,
      context: {
        ageMs,
        price: price.text,
        timestamp: toIso(timestampMs),
        observedAt: toIso(observedAtMs),
      },
    }),
  });
}
