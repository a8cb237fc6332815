// price_change: relative move of the latest price against the history point at or just before now − window (within tolerance).
import type { Measure } from "../finding.js";
import { noData, thresholdMeasure } from "../finding.js";
import { formatPercent, formatSignedPercent, formatWindowMs, toIso } from "../format.js";
import { approxChangeProvablyBelow, relativeChange, type ScaledPrice } from "../price.js";
import type { RuleSettings } from "../rule-scope.js";
import { describeSpan, NO_REFERENCE, REFERENCE_TOO_OLD, windowReferenceIndex } from "../window-reference.js";
import type { Market, RuleCommon } from "./common.js";
import { defineRule, type DetectContext } from "./definition.js";

/** |relative move| over a local window ≥ threshold (fraction). */
export interface PriceChangeRule extends RuleCommon {
  readonly kind: "price_change";
  readonly windowMs: number;
  readonly market: Market;
}

const NO_PRICE = noData("no comparable price");
const PRICE_TOO_OLD = noData("price older than window");
const SHORT_HISTORY = noData("history shorter than window");
const REFERENCE_GAP = noData("no price near the window start");
const ZERO_REFERENCE = noData("zero reference price");

/** The rule's reference index in the target's history, or NO_REFERENCE / REFERENCE_TOO_OLD; null when the latest price gives no verdict. */
function referenceIndex({ target, rule, nowMs }: DetectContext<PriceChangeRule>): number | null {
  if (target.price === null || !target.priceComparable) return null;
  // A price older than the window would be compared with itself and look calm: no verdict.
  if (!(target.priceTimestampMs > nowMs - rule.windowMs)) return null;
  return target.history === null ? NO_REFERENCE : windowReferenceIndex(target.history, nowMs, rule.windowMs);
}

/** price_change on targets of its market. */
export const priceChange = defineRule<PriceChangeRule>({
  appliesTo: (rule, target) => target.kind === rule.market,
  windowLabel: (rule) => formatWindowMs(rule.windowMs),
  historyMs: (rule, target) => (target.kind === rule.market ? rule.windowMs : 0),
  keys: "one",
  detect(context) {
    const { target, rule, nowMs } = context;
    const price = target.price;
    if (price === null || !target.priceComparable) return NO_PRICE;
    if (!(target.priceTimestampMs > nowMs - rule.windowMs)) return PRICE_TOO_OLD;
    const history = target.history;
    if (history === null) return SHORT_HISTORY;
    const index = windowReferenceIndex(history, nowMs, rule.windowMs);
    if (index === NO_REFERENCE) return SHORT_HISTORY;
    // A reference far older than now − window (a warm-up candle, a gap) would pass a longer span off as the window.
    if (index === REFERENCE_TOO_OLD) return REFERENCE_GAP;
    const previous = history.priceAt(index);
    if (previous === undefined) return SHORT_HISTORY;
    const change = relativeChange(previous, price);
    if (change === null) return ZERO_REFERENCE;
    const span = { previous, previousAtMs: history.timeAt(index), priceAtMs: target.priceTimestampMs };
    return [changeMeasure(context, change, price, span, target.observedAtMs)];
  },
  // Proven on doubles (no bigint): the reference is read as its nearest double. A zero reference has no
  // proof (division by zero) and takes the exact path.
  calm(context) {
    const index = referenceIndex(context);
    if (index === null || index < 0) return true;
    const { target, settings } = context;
    const history = target.history;
    if (history === null || target.price === null) return true;
    return (
      settings.direction === "above" &&
      approxChangeProvablyBelow(history.approxAt(index), target.price.approx, settings.threshold)
    );
  },
});

interface Span {
  readonly previous: ScaledPrice;
  readonly previousAtMs: number;
  readonly priceAtMs: number;
}

// The measure and its lazy description.
function changeMeasure(
  { scopeKey, rule, settings }: { scopeKey: string; rule: PriceChangeRule; settings: RuleSettings },
  change: number,
  price: ScaledPrice,
  { previous, previousAtMs, priceAtMs }: Span,
  observedAtMs: number,
): Measure {
  return thresholdMeasure({
    subKey: "",
    scopeKey,
    extraLabels: null,
    magnitude: Math.abs(change),
    value: change,
    settings,
    describe: () => {
      const { span, window } = describeSpan(rule.windowMs, priceAtMs - previousAtMs);
      return {
        summary: `${scopeKey} moved ${formatSignedPercent(change)} in ${span} (${window}threshold ${formatPercent(settings.threshold)})`,
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
