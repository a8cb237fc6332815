// onchain_offchain_deviation: an on-chain aggregate against the off-chain spot price of the same pair.
import { noData, thresholdMeasure } from "../finding.js";
import { formatPercent, formatSignedPercent, toIso } from "../format.js";
import { relativeChange } from "../price.js";
import { targetLabels } from "../rule-scope.js";
import type { RuleCommon } from "./common.js";
import { defineRule } from "./definition.js";

/** |on-chain − off-chain| / off-chain ≥ threshold, only when both are younger than maxAgeMs. */
export interface OnchainOffchainDeviationRule extends RuleCommon {
  readonly kind: "onchain_offchain_deviation";
  readonly maxAgeMs: number;
}

const NO_SPOT = noData("no off-chain spot target for the pair");
const NO_ONCHAIN = noData("no comparable on-chain price");
const NO_OFFCHAIN = noData("no off-chain price");
const STALE_SIDE = noData("a side is stale");
const ZERO_OFFCHAIN = noData("zero off-chain price");

/** onchain_offchain_deviation on on-chain targets, against the pair's off-chain spot; its alerts are the pair's on a network. */
export const onchainOffchainDeviation = defineRule<OnchainOffchainDeviationRule>({
  appliesTo: (_rule, target) => target.kind === "onchain",
  targetLabels: (target) =>
    target.kind === "onchain" ? { pair: target.pair, network: target.network } : targetLabels(target),
  related: "offchain_spot",
  keys: "one",
  detect({ target: onchain, related: offchain, rule, scopeKey, settings, nowMs }) {
    if (offchain === undefined) return NO_SPOT;
    const onPrice = onchain.price;
    const offPrice = offchain.price;
    if (onPrice === null || !onchain.priceComparable) return NO_ONCHAIN;
    if (offPrice === null || !offchain.priceComparable) return NO_OFFCHAIN;
    const onchainAgeMs = nowMs - onchain.priceTimestampMs;
    const offchainAgeMs = nowMs - offchain.priceTimestampMs;
    // A stale side is no verdict either way (stale_price reports it).
    if (!(onchainAgeMs < rule.maxAgeMs) || !(offchainAgeMs < rule.maxAgeMs)) return STALE_SIDE;
    const change = relativeChange(offPrice, onPrice);
    if (change === null) return ZERO_OFFCHAIN;
    const observedAtMs = Math.max(onchain.observedAtMs, offchain.observedAtMs);
    return [
      thresholdMeasure({
        subKey: "",
        scopeKey,
        extraLabels: null,
        magnitude: Math.abs(change),
        value: change,
        settings,
        relatedTargetId: offchain.spec.id,
        describe: () => ({
          summary: `${scopeKey} on-chain is ${formatSignedPercent(change)} off the off-chain price (threshold ${formatPercent(settings.threshold)})`,
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
  },
});
