// Config of the `publisher_stale` rule: a publisher (or feed) not updated; upstream caches publisher stats ~20 min.
import { bool } from "../fields.js";
import { MINUTE, defineRuleConfig } from "./common.js";

/** `publisher_stale`: its defaults and its own keys. */
export const publisherStale = defineRuleConfig(
  "publisher_stale",
  {
    unit: "ms",
    threshold: () => 30 * MINUTE,
    severity: "warning",
    forMs: 0,
    clearFactor: 1,
    thresholdDoc: "ms since the publisher (or feed) last updated (upstream caches stats ~20 min)",
  },
  {
    perFeed: bool({ doc: "Check each feed of the publisher, not only the publisher.", default: false }),
  },
);
