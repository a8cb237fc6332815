// variation: the on-chain `variations[window]` fraction the API computes from candle mids.
import { noData, thresholdMeasure } from "../finding.js";
import { formatPercent, formatSignedPercent, toIso } from "../format.js";
import type { Interval } from "../types.js";
import type { RuleCommon } from "./common.js";
import { defineRule } from "./definition.js";

/** |on-chain `variations[window]`| ≥ threshold (fraction). */
export interface VariationRule extends RuleCommon {
  readonly kind: "variation";
  readonly window: Interval;
}

const NO_SNAPSHOT = noData("no on-chain snapshot");
const ABSENT = noData("variation absent");

/** variation on on-chain targets; absent (fewer than two candles) is no data. */
export const variation = defineRule<VariationRule>({
  appliesTo: (_rule, target) => target.kind === "onchain",
  windowLabel: (rule) => rule.window,
  keys: "one",
  detect({ target, rule, scopeKey, settings }) {
    const snapshot = target.snapshot;
    if (snapshot?.kind !== "onchain") return NO_SNAPSHOT;
    const value = snapshot.value.variations[rule.window];
    if (value === undefined || !Number.isFinite(value)) return ABSENT;
    const observedAtMs = target.observedAtMs;
    return [
      thresholdMeasure({
        subKey: "",
        scopeKey,
        extraLabels: null,
        magnitude: Math.abs(value),
        value,
        settings,
        describe: () => {
          // With decimals 0 (the server could not read them) the raw integer is no price: say it is unknown.
          const known = snapshot.value.decimalsKnown;
          return {
            summary: `${scopeKey} on-chain varied ${formatSignedPercent(value)} over ${rule.window} (threshold ${formatPercent(settings.threshold)})${known ? "" : "; price unknown (on-chain decimals unreadable)"}`,
            context: { price: known ? snapshot.value.price.text : null, observedAt: toIso(observedAtMs) },
          };
        },
      }),
    ];
  },
});
