// funding_rate: the hourly funding rate of the latest observation, as a fraction per hour.
import { formatPercent, toIso, trimNumber } from "../format.js";
import { settingsFor, targetScopeKey } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import type { FundingRate } from "../types.js";
import { noData, thresholdMeasure, type Finding, type RuleOf } from "./finding.js";

/** |hourlyRate| of the newest rate ≥ threshold; an empty page is no data. */
export function detectFundingRate(
  data: TargetData,
  rule: RuleOf<"funding_rate">,
  _nowMs: number,
): readonly Finding[] {
  const snapshot = data.snapshot;
  if (snapshot?.kind !== "funding") return noData("no funding data");
  let latest: FundingRate | undefined;
  for (const rate of snapshot.value)
    if (latest === undefined || rate.timestampMs > latest.timestampMs) latest = rate;
  if (latest === undefined || !Number.isFinite(latest.hourlyRate)) return noData("no funding rate");
  const { hourlyRate, timestampMs, source } = latest;
  const key = targetScopeKey(data.spec);
  const settings = settingsFor(rule, key);
  const observedAtMs = data.observedAtMs;
  const sign = hourlyRate >= 0 ? "+" : "";
  return [
    thresholdMeasure({
      subKey: "",
      scopeKey: key,
      extraLabels: null,
      magnitude: Math.abs(hourlyRate),
      value: hourlyRate,
      settings,
      describe: () => ({
        summary: `${key} funding on ${source} is ${sign}${trimNumber(hourlyRate * 100, 4)}%/h (threshold ${formatPercent(settings.threshold)}/h)`,
        context: { hourlyRate, timestamp: toIso(timestampMs), observedAt: toIso(observedAtMs) },
      }),
    }),
  ];
}
