// Config of the `upstream_down` rule: most targets failing with one kind of error at once.
import { causeDefaults, minFraction } from "./cause.js";
import { defineRuleConfig, windowMs } from "./common.js";

/** `upstream_down`: its defaults and its own keys. */
export const upstreamDown = defineRuleConfig(
  "upstream_down",
  causeDefaults(3, "targets whose latest poll failed with the same kind of error"),
  {
    minFraction: minFraction(
      0.5,
      "the judged targets (failing, configured but not polled yet, or polled fine within windowMs)",
    ),
    windowMs: windowMs(
      60_000,
      "A healthy target's latest poll must be this recent to count against the cause; keep it ≥ 2× the slowest periodMs, else healthy slow-polled targets are left out and a few failures read as most.",
    ),
  },
);
