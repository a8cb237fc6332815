// vault_share_price: the vault's share price dropped by a fraction over a local window.
import { formatPercent, toIso, trimNumber } from "../format.js";
import { relativeChange } from "../price.js";
import { settingsFor, targetScopeKey } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import { noData, thresholdMeasure, type Finding, type RuleOf } from "./finding.js";
import { describeSpan, NO_REFERENCE, REFERENCE_TOO_OLD, windowReferenceIndex } from "./window-reference.js";

/** drop = (previous − latest) / previous ≥ threshold, previous being the share price at or just before now − window (within tolerance). */
export function detectVaultSharePrice(
  data: TargetData,
  rule: RuleOf<"vault_share_price">,
  nowMs: number,
): readonly Finding[] {
  const price = data.price;
  if (price === null || !data.priceComparable) return noData("no share price");
  if (!(data.priceTimestampMs > nowMs - rule.windowMs)) return noData("share price older than window");
  const history = data.history;
  const index = history === null ? NO_REFERENCE : windowReferenceIndex(history, nowMs, rule.windowMs);
  if (index === REFERENCE_TOO_OLD) return noData("no share price near the window start");
  const previous = index < 0 ? undefined : history?.priceAt(index);
  if (history === null || previous === undefined) return noData("history shorter than window");
  const spanMs = data.priceTimestampMs - history.timeAt(index);
  const change = relativeChange(previous, price);
  if (change === null) return noData("zero reference share price");
  const drop = -change;
  const key = targetScopeKey(data.spec);
  const settings = settingsFor(rule, key);
  const observedAtMs = data.observedAtMs;
  return [
    thresholdMeasure({
      subKey: "",
      scopeKey: key,
      extraLabels: null,
      magnitude: drop,
      value: drop,
      settings,
      describe: () => {
        const { span, window } = describeSpan(rule.windowMs, spanMs);
        return {
          summary: `vault ${key} share price ${drop >= 0 ? "fell" : "rose"} ${trimNumber(Math.abs(drop) * 100, 2)}% in ${span} (${window}threshold ${formatPercent(settings.threshold)})`,
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
}
