// onchain_offchain_deviation: an on-chain aggregate against the off-chain spot price of the same pair.
import { formatPercent, formatSignedPercent, toIso } from "../format.js";
import { relativeChange } from "../price.js";
import { settingsFor, targetScopeKey } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import { noData, thresholdMeasure, type Finding, type RuleOf } from "./finding.js";

/** |on-chain − off-chain| / off-chain ≥ threshold, judged only when both prices are younger than maxAgeMs. */
export function detectOnchainOffchainDeviation(
  onchain: TargetData,
  offchain: TargetData | undefined,
  rule: RuleOf<"onchain_offchain_deviation">,
  nowMs: number,
): readonly Finding[] {
  if (offchain === undefined) return noData("no off-chain spot target for the pair");
  const onPrice = onchain.price;
  const offPrice = offchain.price;
  if (onPrice === null || !onchain.priceComparable) return noData("no comparable on-chain price");
  if (offPrice === null || !offchain.priceComparable) return noData("no off-chain price");
  const onchainAgeMs = nowMs - onchain.priceTimestampMs;
  const offchainAgeMs = nowMs - offchain.priceTimestampMs;
  // A stale side is no verdict either way (stale_price reports it).
  if (!(onchainAgeMs < rule.maxAgeMs) || !(offchainAgeMs < rule.maxAgeMs)) return noData("a side is stale");
  const change = relativeChange(offPrice, onPrice);
  if (change === null) return noData("zero off-chain price");
  const key = targetScopeKey(onchain.spec);
  const settings = settingsFor(rule, key);
  const observedAtMs = Math.max(onchain.observedAtMs, offchain.observedAtMs);
  return [
    thresholdMeasure({
      subKey: "",
      scopeKey: key,
      extraLabels: null,
      magnitude: Math.abs(change),
      value: change,
      settings,
      relatedTargetId: offchain.spec.id,
      describe: () => ({
        summary: `${key} on-chain is ${formatSignedPercent(change)} off the off-chain price (threshold ${formatPercent(settings.threshold)})`,
        context: {
          onchainPrice: onPrice.text,
          offchainPrice: offPrice.text,
          onchainAgeMs,
          offchainAgeMs,
          observedAt: toIso(observedAtMs),
        },
      }),
    }),
  ];
}
