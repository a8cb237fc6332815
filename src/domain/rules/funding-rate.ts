// funding_rate: the hourly funding rate of the latest observation, as a fraction per hour.
import { noData, thresholdMeasure } from "../finding.js";
import { formatPercent, toIso, trimNumber } from "../format.js";
import type { FundingRate } from "../types.js";
import type { RuleCommon } from "./common.js";
import { defineRule } from "./definition.js";

/** |hourly funding rate| ≥ threshold (fraction per hour). */
export interface FundingRateRule extends RuleCommon {
  readonly kind: "funding_rate";
}

const NO_DATA = noData("no funding data");
const NO_RATE = noData("no funding rate");

/** funding_rate on funding targets: |hourlyRate| of the newest rate ≥ threshold; an empty page is no data. */
export const fundingRate = defineRule<FundingRateRule>({
  appliesTo: (_rule, target) => target.kind === "funding",
  keys: "one",
  detect({ target, scopeKey, settings }) {
    const snapshot = target.snapshot;
    if (snapshot?.kind !== "funding") return NO_DATA;
    let latest: FundingRate | undefined;
    for (const rate of snapshot.value)
      if (latest === undefined || rate.timestampMs > latest.timestampMs) latest = rate;
    if (latest === undefined || !Number.isFinite(latest.hourlyRate)) return NO_RATE;
    const { hourlyRate, timestampMs, source } = latest;
    const observedAtMs = target.observedAtMs;
    const sign = hourlyRate >= 0 ? "+" : "";
    return [
      thresholdMeasure({
        subKey: "",
        scopeKey,
        extraLabels: null,
        magnitude: Math.abs(hourlyRate),
        value: hourlyRate,
        settings,
        describe: () => ({
          summary: `${scopeKey} funding on ${source} is ${sign}${trimNumber(hourlyRate * 100, 4)}%/h (threshold ${formatPercent(settings.threshold)}/h)`,
          context: { hourlyRate, timestamp: toIso(timestampMs), observedAt: toIso(observedAtMs) },
        }),
      }),
    ];
  },
});
