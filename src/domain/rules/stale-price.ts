// stale_price: age of the latest price, measured from the price's own timestamp, against a threshold in ms.
import { noData, thresholdMeasure } from "../finding.js";
import { formatDurationMs, toIso } from "../format.js";
import { crossesFire } from "../rule-scope.js";
import type { Market, RuleCommon } from "./common.js";
import { defineRule } from "./definition.js";

/** Age of the latest price (ms) ≥ threshold. */
export interface StalePriceRule extends RuleCommon {
  readonly kind: "stale_price";
  readonly market: Market;
}

const NO_PRICE = noData("no price yet");

/** stale_price on targets of its market, evaluated on every tick so the age keeps growing without new data. */
export const stalePrice = defineRule<StalePriceRule>({
  appliesTo: (rule, target) => target.kind === rule.market,
  timeDriven: true,
  keys: "one",
  detect({ target, rule, scopeKey, settings, nowMs }) {
    const price = target.price;
    const timestampMs = target.priceTimestampMs;
    if (price === null || !Number.isFinite(timestampMs)) return NO_PRICE;
    const ageMs = nowMs - timestampMs;
    const observedAtMs = target.observedAtMs;
    return [
      thresholdMeasure({
        subKey: "",
        scopeKey,
        extraLabels: null,
        magnitude: ageMs,
        value: ageMs,
        settings,
        describe: () => ({
          summary: `${scopeKey} ${rule.market} price is ${formatDurationMs(ageMs)} old (threshold ${formatDurationMs(settings.threshold)})`,
          context: {
            ageMs,
            price: price.text,
            timestamp: toIso(timestampMs),
            observedAt: toIso(observedAtMs),
          },
        }),
      }),
    ];
  },
  calm: ({ target, settings, nowMs }) => !crossesFire(nowMs - target.priceTimestampMs, settings),
});
