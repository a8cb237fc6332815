// Config of the `upstream_error` rule: consecutive failed polls of a target (at least one).
import { defineRuleConfig } from "./common.js";

/** `upstream_error`: its defaults and its own keys. */
export const upstreamError = defineRuleConfig(
  "upstream_error",
  {
    unit: "count",
    thresholdMin: 1,
    threshold: () => 3,
    severity: "critical",
    forMs: 0,
    clearFactor: 1,
    thresholdDoc: "consecutive failed polls of a target",
  },
  {},
);
