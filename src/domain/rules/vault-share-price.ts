// vault_share_price: the vault's share price dropped by a fraction over a local window.
import { noData, thresholdMeasure } from "../finding.js";
import { formatPercent, formatWindowMs, toIso, trimNumber } from "../format.js";
import { relativeChange } from "../price.js";
import { describeSpan, NO_REFERENCE, REFERENCE_TOO_OLD, windowReferenceIndex } from "../window-reference.js";
import type { RuleCommon } from "./common.js";
import { defineRule } from "./definition.js";

/** Share price dropped by ≥ threshold (fraction) over the window. */
export interface VaultSharePriceRule extends RuleCommon {
  readonly kind: "vault_share_price";
  readonly windowMs: number;
}

const NO_SHARE_PRICE = noData("no share price");
const PRICE_TOO_OLD = noData("share price older than window");
const REFERENCE_GAP = noData("no share price near the window start");
const SHORT_HISTORY = noData("history shorter than window");
const ZERO_REFERENCE = noData("zero reference share price");

/** vault_share_price on vault targets: drop = (previous − latest) / previous ≥ threshold, previous at or just before now − window. */
export const vaultSharePrice = defineRule<VaultSharePriceRule>({
  appliesTo: (_rule, target) => target.kind === "vault",
  windowLabel: (rule) => formatWindowMs(rule.windowMs),
  historyMs: (rule, target) => (target.kind === "vault" ? rule.windowMs : 0),
  keys: "one",
  detect({ target, rule, scopeKey, settings, nowMs }) {
    const price = target.price;
    if (price === null || !target.priceComparable) return NO_SHARE_PRICE;
    if (!(target.priceTimestampMs > nowMs - rule.windowMs)) return PRICE_TOO_OLD;
    const history = target.history;
    const index = history === null ? NO_REFERENCE : windowReferenceIndex(history, nowMs, rule.windowMs);
    if (index === REFERENCE_TOO_OLD) return REFERENCE_GAP;
    const previous = index < 0 ? undefined : history?.priceAt(index);
    if (history === null || previous === undefined) return SHORT_HISTORY;
    const spanMs = target.priceTimestampMs - history.timeAt(index);
    const change = relativeChange(previous, price);
    if (change === null) return ZERO_REFERENCE;
    const drop = -change;
    const observedAtMs = target.observedAtMs;
    return [
      thresholdMeasure({
        subKey: "",
        scopeKey,
        extraLabels: null,
        magnitude: drop,
        value: drop,
        settings,
        describe: () => {
          const { span, window } = describeSpan(rule.windowMs, spanMs);
          return {
            summary: `vault ${scopeKey} share price ${drop >= 0 ? "fell" : "rose"} ${trimNumber(Math.abs(drop) * 100, 2)}% in ${span} (${window}threshold ${formatPercent(settings.threshold)})`,
            context: {
              sharePrice: price.text,
              previous: previous.text,
              spanMs,
              observedAt: toIso(observedAtMs),
            },
          };
        },
      }),
    ];
  },
});
