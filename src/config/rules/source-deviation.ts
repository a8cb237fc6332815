// Config of the `source_deviation` rule: one source deviating from the aggregate on many pairs.
import { causeDefaults } from "./cause.js";
import { defineRuleConfig } from "./common.js";

/** `source_deviation`: its defaults (no keys of its own). */
export const sourceDeviation = defineRuleConfig(
  "source_deviation",
  causeDefaults(3, "pairs on which one source's component_deviation condition holds (per market)"),
  {},
);
