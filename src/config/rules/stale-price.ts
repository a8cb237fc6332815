// Config of the `stale_price` rule: age of the latest price (off-chain data is fresh for 60 s, on-chain
// feeds are pushed every ~60 s or on a 2.5 % move).
import { MINUTE, defineRuleConfig, market } from "./common.js";

/** `stale_price`: its defaults and its own keys. */
export const stalePrice = defineRuleConfig(
  "stale_price",
  {
    unit: "ms",
    threshold: (m) => (m === "onchain" ? 5 * MINUTE : MINUTE),
    severity: "critical",
    forMs: 0,
    clearFactor: 1,
    thresholdDoc: "age of the latest price in ms (default 60 s off-chain, 5 min on-chain)",
  },
  { market: market() },
);
