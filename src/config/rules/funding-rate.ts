// Config of the `funding_rate` rule: the hourly funding rate, a fraction per hour.
import { BAND, defineRuleConfig } from "./common.js";

/** `funding_rate`: its defaults and its own keys. */
export const fundingRate = defineRuleConfig(
  "funding_rate",
  {
    unit: "fraction",
    threshold: () => 0.001,
    severity: "warning",
    forMs: 0,
    clearFactor: BAND,
    thresholdDoc: "|hourly funding rate| as a fraction per hour (0.001 = 0.1 %/h ≈ 876 %/year)",
  },
  {},
);
