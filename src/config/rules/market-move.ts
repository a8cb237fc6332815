// Config of the `market_move` rule: many pairs crossing their price_change thresholds one way within one window.
import { causeDefaults, minFraction } from "./cause.js";
import { defineRuleConfig, windowMs } from "./common.js";

/** `market_move`: its defaults and its own keys. */
export const marketMove = defineRuleConfig(
  "market_move",
  {
    ...causeDefaults(3, "pairs whose price_change condition started within windowMs, moving the same way"),
    severity: "warning",
  },
  {
    minFraction: minFraction(0.5, "the monitored pairs (off- and on-chain targets)"),
    windowMs: windowMs(
      60_000,
      "The pairs' price_change conditions must have started within this long of each other.",
    ),
  },
);
