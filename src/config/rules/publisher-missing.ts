// Config of the `publisher_missing` rule: an expected publisher is absent.
import { list, listItem } from "../fields.js";
import { MINUTE, defineRuleConfig } from "./common.js";

/** `publisher_missing`: its defaults and its own keys. */
export const publisherMissing = defineRuleConfig(
  "publisher_missing",
  {
    unit: "unused",
    threshold: () => 0,
    severity: "warning",
    forMs: MINUTE,
    clearFactor: 1,
    thresholdDoc: "unused (fires when an expected publisher is absent)",
  },
  {
    publishers: list(listItem(), {
      doc: 'Publishers expected to be present, e.g. ["PRAGMA"].',
      required: { emptyReason: "must list at least one publisher" },
    }),
  },
);
