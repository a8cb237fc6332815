// Config of the `vault_share_price` rule: a vault's share-price drop over a window.
import { BAND, defineRuleConfig, windowMs } from "./common.js";

/** `vault_share_price`: its defaults and its own keys. */
export const vaultSharePrice = defineRuleConfig(
  "vault_share_price",
  {
    unit: "fraction",
    threshold: () => 0.01,
    severity: "critical",
    forMs: 0,
    clearFactor: BAND,
    thresholdDoc: "share-price drop over windowMs as a fraction",
  },
  { windowMs: windowMs(3_600_000, "Window the share-price drop is measured over.") },
);
