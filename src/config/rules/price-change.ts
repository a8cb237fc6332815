// Config of the `price_change` rule: |relative move| over a local window, as a fraction.
import { BAND, defineRuleConfig, market, windowMs } from "./common.js";

/** `price_change`: its defaults and its own keys. */
export const priceChange = defineRuleConfig(
  "price_change",
  {
    unit: "fraction",
    threshold: () => 0.02,
    severity: "warning",
    forMs: 0,
    clearFactor: BAND,
    thresholdDoc: "|relative move| over windowMs, as a fraction (0.02 = 2 %)",
  },
  { market: market(), windowMs: windowMs(60_000, "Local window the move is measured over.") },
);
