// price_change: relative move of the latest price against the history point at or just before now − window (within tolerance).
import { formatPercent, formatSignedPercent, toIso } from "../format.js";
import { approxChangeProvablyBelow, relativeChange, type ScaledPrice } from "../price.js";
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
import { describeSpan, NO_REFERENCE, REFERENCE_TOO_OLD, windowReferenceIndex } from "./window-reference.js";

/** |move| over `windowMs` ≥ threshold (fraction); needs a fresh comparable price and history reaching back far enough. With `quiet`, a calm move of an alert-free key is left out. */
export function detectPriceChange(
  data: TargetData,
  rule: RuleOf<"price_change">,
  nowMs: number,
  quiet?: QuietKeys,
): readonly Finding[] {
  const price = data.price;
  if (price === null || !data.priceComparable) return noData("no comparable price");
  // A price older than the window would be compared with itself and look calm: no verdict.
  if (!(data.priceTimestampMs > nowMs - rule.windowMs)) return noData("price older than window");
  const history = data.history;
  if (history === null) return noData("history shorter than window");
  const index = windowReferenceIndex(history, nowMs, rule.windowMs);
  if (index === NO_REFERENCE) return noData("history shorter than window");
  // A reference far older than now − window (a warm-up candle, a gap) would pass a longer span off as the window.
  if (index === REFERENCE_TOO_OLD) return noData("no price near the window start");
  const key = quiet === undefined ? targetScopeKey(data.spec) : quiet.scopeKey;
  const settings = quiet === undefined ? settingsFor(rule, key) : quiet.settings;
  // Proven calm on doubles (no bigint, no allocation: the reference is read as its double) when no alert
  // record needs the value. A zero reference has no proof (division by zero) and takes the exact path.
  if (
    quiet !== undefined &&
    settings.direction === "above" &&
    approxChangeProvablyBelow(history.approxAt(index), price.approx, settings.threshold) &&
    quiet.isQuiet("")
  )
    return NO_FINDINGS;
  const previous = history.priceAt(index);
  if (previous === undefined) return noData("history shorter than window");
  const change = relativeChange(previous, price);
  if (change === null) return noData("zero reference price");
  return [
    changeMeasure(
      key,
      rule.windowMs,
      settings,
      change,
      price,
      previous,
      history.timeAt(index),
      data.priceTimestampMs,
      data.observedAtMs,
    ),
  ];
}

// The measure and its lazy description, outside the detector so its quiet path allocates no closure
// context (see staleMeasure in stale-price.ts).
function changeMeasure(
  key: string,
  windowMs: number,
  settings: RuleSettings,
  change: number,
  price: ScaledPrice,
  previous: ScaledPrice,
  previousAtMs: number,
  priceAtMs: number,
  observedAtMs: number,
): Measure {
  return thresholdMeasure({
    subKey: "",
    scopeKey: key,
    extraLabels: null,
    magnitude: Math.abs(change),
    value: change,
    settings,
    describe: () => {
      const { span, window } = describeSpan(windowMs, priceAtMs - previousAtMs);
      return {
        summary: `${key} moved ${formatSignedPercent(change)} in ${span} (${window}threshold ${formatPercent(settings.threshold)})`,
        context: {
          price: price.text,
          previous: previous.text,
          previousAt: toIso(previousAtMs),
          spanMs: priceAtMs - previousAtMs,
          observedAt: toIso(observedAtMs),
        },
      };
    },
  });
}
