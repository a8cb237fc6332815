// Config of the `onchain_offchain_deviation` rule: on-chain against off-chain price, above the 2.5 % push deviation.
import { int } from "../fields.js";
import { BAND, MINUTE, defineRuleConfig } from "./common.js";

/** `onchain_offchain_deviation`: its defaults and its own keys. */
export const onchainOffchainDeviation = defineRuleConfig(
  "onchain_offchain_deviation",
  {
    unit: "fraction",
    threshold: () => 0.03,
    severity: "critical",
    forMs: MINUTE,
    clearFactor: BAND,
    thresholdDoc: "|on-chain − off-chain| / off-chain as a fraction (above the 2.5 % push deviation)",
  },
  {
    maxAgeMs: int({
      doc: "Compare only when both prices are younger than this (ms).",
      default: 120_000,
      min: 1_000,
      max: 7 * 86_400_000,
    }),
  },
);
