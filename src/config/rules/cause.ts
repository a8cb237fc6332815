// What the cause rules' configs share: counts of members, resolved once none is left, and the fraction key.
import { number } from "../fields.js";
import type { RuleKindDefaults } from "./common.js";

/** Defaults of a cause rule: fire at `threshold` members, resolve once none is left. */
export function causeDefaults(threshold: number, thresholdDoc: string): RuleKindDefaults {
  return {
    unit: "count",
    thresholdMin: 1,
    threshold: () => threshold,
    severity: "critical",
    forMs: 0,
    clearFactor: 1,
    clearAt: 1,
    thresholdDoc,
  };
}

/** The key `minFraction`: the fraction of `of` that must be members too (0 = the count alone). */
export function minFraction(defaultFraction: number, of: string) {
  return number({
    doc: `Fire only when at least this fraction of ${of} are members too (0 = the threshold count alone).`,
    default: defaultFraction,
    min: 0,
    max: 1,
    unit: "a fraction: 0.5 = half",
  });
}

/** What docs/configuration.md says of the cause rules before their keys: the exact conditions. */
export const CAUSE_RULES_DOC = `The cause rules (\`upstream_down\`, \`publisher_outage\`, \`source_deviation\`, \`market_move\`) run on no
target: after every step of the engine (a poll's rules, a tick) they read the other alerts (and, for
\`upstream_down\`, the targets' latest poll outcomes) and raise one parent alert per cause. While a parent fires,
each pending or firing alert it explains (its child) carries \`causedBy: <parent fingerprint>\` on the WebSocket,
in the journal and in \`/api/v1/alerts\`, keeps its whole lifecycle, and is not notified by chat-ops sinks on its
own (as under a silence; the event hub decides once, for every sink and across a restart). A child already
firing when its parent starts is announced again with \`causedBy\` (reason \`repeat\`, not notified). A child
that resolves while its parent fires is notified only when its firing was. When the parent resolves, each child
still firing is announced again without \`causedBy\` (reason \`repeat\`) and notified: it outlived its cause.
Thresholds count members; \`clearThreshold\` defaults to 1, so a parent resolves once none is left. \`forMs\`,
\`minFiringMs\`, \`repeatIntervalMs\` and flap damping apply to a parent as to any alert, and parents are
checkpointed with the other alerts.

- \`upstream_down\` (one alert, no labels): the targets whose latest poll failed are grouped by the kind of error
  (\`HTTP <status>\`, a network errno such as \`ECONNREFUSED\`, else the error code). The largest group fires
  the rule when it has ≥ \`threshold\` targets and ≥ \`minFraction\` of the judged targets (every failing target,
  every configured target not polled yet, and every target whose latest poll succeeded within
  \`windowMs\`, so a few first answers failing at startup are not "most"); it resolves once fewer than
  \`clearThreshold\` targets fail with that kind. Its children are the \`upstream_error\` alerts of the group's
  targets; since a target fails once before \`upstream_error\` (threshold 3) fires, the parent usually fires
  first and no child is notified. Summary: \`Pragma API unreachable (ECONNREFUSED): 6 of 6 targets failing since
  10:00:03\` ("failing" instead of "unreachable" for HTTP errors).
- \`publisher_outage\` (label \`publisher\`): the per-pair alerts of \`publisher_stale\` (with \`perFeed\`) and
  \`publisher_missing\` (on on-chain entry sets) whose condition holds, grouped by publisher; fires when they cover
  ≥ \`threshold\` distinct pairs, naming the publisher and the pairs. The per-publisher \`publisher_stale\` alert
  (no pair) already names the publisher and is no child. \`pairs\` and \`overrides\` are keyed by publisher.
- \`source_deviation\` (labels \`source\`, \`market\`): the \`component_deviation\` alerts whose condition holds,
  grouped by source and market; fires at ≥ \`threshold\` distinct pairs and lists them, largest deviation first.
  Pending children count, so with component_deviation's \`forMs\` the parent fires before its children do.
  \`pairs\` and \`overrides\` are keyed by source.
- \`market_move\` (label \`direction\`: \`up\` or \`down\`): the \`price_change\` alerts whose condition holds,
  grouped by the sign of their move; fires when ≥ \`threshold\` distinct pairs, and ≥ \`minFraction\` of the
  monitored pairs (distinct pairs of the off- and on-chain targets), started their condition within the last
  \`windowMs\`; resolves once fewer than \`clearThreshold\` pairs still hold one. The summary lists the pairs, largest
  move first. \`pairs\` filters the pairs counted. A price_change alert that fires before the count is reached
  (price_change has no \`forMs\` by default) is a plain alert until its parent adopts it; a grouping sink
  (the default) still holds it in its group wait, so when the parent fires within \`groupWaitMs\` the first
  notification names the market move and leaves the adopted pairs out (they are listed in its summary), and
  their resolves are not notified either. Only a sink with grouping off (\`groupBy: ["..."]\`) pages such a
  price_change alert on its own.
`;
