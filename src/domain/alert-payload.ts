// The payload an alert record announces: the finding's text and context, plus what holds or ended the alert.
import type { AlertRecord } from "./alert-engine.js";
import type { AlertContext, AlertPayload } from "./events.js";
import { toIso } from "./format.js";
import type { RuleConfig } from "./rules/index.js";

/** Why an alert resolved without its condition clearing: the config no longer produces it. */
export type RemovalCause = "target_removed" | "rule_removed";

const REMOVAL_TEXT: Readonly<Record<RemovalCause, string>> = {
  target_removed: "its target was removed from the config",
  rule_removed: "its rule was removed, disabled or no longer covers it",
};

/** The note buildPayload appends to the summary of a firing alert whose condition has cleared. */
const HELD_NOTE = /; (flapping: )?held firing until \S+ unless it recurs$/;

// Until when a firing alert whose condition cleared stays firing: its hold-down, and the flap window
// after its last flip when flapping (NaN when nothing holds it, as at the instant it resolves).
function heldUntil(record: AlertRecord, rule: RuleConfig): number {
  const holdDownEndMs = record.startsAtMs + rule.minFiringMs;
  if (!record.flapping) return holdDownEndMs > record.startsAtMs ? holdDownEndMs : Number.NaN;
  const lastFlipMs = record.flipTimesMs[record.flipTimesMs.length - 1] ?? Number.NaN;
  return Math.max(lastFlipMs + rule.flapWindowMs, holdDownEndMs);
}

/** The payload of a record's transition; `rule` is given while firing, so a held alert says until when. */
export function buildPayload(
  record: AlertRecord,
  status: "firing" | "resolved",
  reason: AlertPayload["reason"],
  nowMs: number,
  why: RemovalCause | null,
  rule: RuleConfig | null,
): AlertPayload {
  const finding = record.finding;
  const previous = record.announced;
  const description = finding?.describe() ?? {
    // without fresh data (restored), the last payload's text, less a hold note it may carry
    summary: (previous?.summary ?? record.fingerprint).replace(HELD_NOTE, ""),
    context: previous?.context ?? {},
  };
  let summary = description.summary;
  let context: AlertContext = description.context;
  const heldUntilMs =
    status === "firing" && !record.rawActive && rule !== null ? heldUntil(record, rule) : Number.NaN;
  if (record.flapping || why !== null || Number.isFinite(heldUntilMs)) {
    const extended: Record<string, string | number | boolean | null> = { ...context };
    if (record.flapping) extended["flapping"] = true;
    if (Number.isFinite(heldUntilMs)) {
      extended["heldUntil"] = toIso(heldUntilMs);
      summary = `${summary}; ${record.flapping ? "flapping: " : ""}held firing until ${toIso(heldUntilMs)} unless it recurs`;
    }
    if (why !== null) {
      extended["resolvedBy"] = why;
      // not "the condition cleared": the daemon stopped watching it, and the last state is kept as such
      summary = `No longer monitored: ${REMOVAL_TEXT[why]} (last state: ${summary})`;
    }
    context = extended;
  }
  const payload: AlertPayload = {
    fingerprint: record.fingerprint,
    status,
    rule: record.ruleKind,
    severity: finding?.severity ?? previous?.severity ?? "warning",
    labels: record.labels,
    summary,
    value: finding !== null ? finding.value : (previous?.value ?? null),
    threshold: finding !== null ? finding.threshold : (previous?.threshold ?? null),
    startsAt: toIso(record.startsAtMs),
    endsAt: status === "resolved" ? toIso(nowMs) : null,
    reason,
    context,
  };
  return record.causedBy === null ? payload : { ...payload, causedBy: record.causedBy };
}
