// Config of the `component_deviation` rule: a source or publisher's distance from the aggregate.
import { BAND, defineRuleConfig, market } from "./common.js";

/** `component_deviation`: its defaults and its own keys. */
export const componentDeviation = defineRuleConfig(
  "component_deviation",
  {
    unit: "fraction",
    threshold: (m) => (m === "onchain" ? 0.03 : 0.01),
    severity: "warning",
    forMs: 30_000,
    clearFactor: BAND,
    thresholdDoc:
      "a source/publisher's distance from the aggregate, as a fraction (1 % off-chain, 3 % on-chain)",
  },
  { market: market() },
);
