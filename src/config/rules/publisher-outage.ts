// Config of the `publisher_outage` rule: one publisher stale or missing on many pairs.
import { causeDefaults } from "./cause.js";
import { defineRuleConfig } from "./common.js";

/** `publisher_outage`: its defaults (no keys of its own). */
export const publisherOutage = defineRuleConfig(
  "publisher_outage",
  causeDefaults(
    3,
    "pairs on which one publisher is stale (publisher_stale perFeed) or missing (publisher_missing on-chain)",
  ),
  {},
);
