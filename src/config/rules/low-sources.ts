// Config of the `low_sources` rule: the number of aggregated sources at or below a count.
import { defineRuleConfig, market } from "./common.js";

/** `low_sources`: its defaults and its own keys. */
export const lowSources = defineRuleConfig(
  "low_sources",
  {
    unit: "count",
    threshold: () => 2,
    severity: "warning",
    forMs: 10_000,
    clearFactor: 1,
    thresholdDoc: "fires when the number of aggregated sources is ≤ this count",
  },
  { market: market() },
);
