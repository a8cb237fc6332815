// Config of the `vault_status` rule: a vault not live or with deposits paused.
import { defineRuleConfig } from "./common.js";

/** `vault_status`: its defaults and its own keys. */
export const vaultStatus = defineRuleConfig(
  "vault_status",
  {
    unit: "unused",
    threshold: () => 0,
    severity: "critical",
    forMs: 0,
    clearFactor: 1,
    thresholdDoc: "unused (fires when status is not live or deposits are paused)",
  },
  {},
);
