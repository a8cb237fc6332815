// Config of the `variation` rule: |on-chain variations[window]| as a fraction.
import { oneOf } from "../fields.js";
import { BAND, defineRuleConfig } from "./common.js";

/** `variation`: its defaults and its own keys. */
export const variation = defineRuleConfig(
  "variation",
  {
    unit: "fraction",
    threshold: () => 0.05,
    severity: "warning",
    forMs: 0,
    clearFactor: BAND,
    thresholdDoc: "|on-chain variations[window]| as a fraction",
  },
  { window: oneOf(["1h", "1d", "1w"], { doc: "Variation key.", default: "1h" }) },
);
