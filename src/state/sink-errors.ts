// Recovers the daemon-raised alerts (`sink_error`, `monitor_stalled`) still firing at the end of a journal: the engine does not own them.
import type { AlertPayload, JournaledEvent, RuleKind } from "../domain/events.js";

/** The last announced state of each fingerprint of `rule` in `events`, keeping those still firing. */
export function firingAlertsOfRule(events: readonly JournaledEvent[], rule: RuleKind): AlertPayload[] {
  const last = new Map<string, AlertPayload>();
  for (const event of events) {
    if (event.type === "alert" && event.alert.rule === rule) last.set(event.alert.fingerprint, event.alert);
  }
  return [...last.values()].filter((alert) => alert.status === "firing");
}

/** The `sink_error` alerts still firing at the end of `events`. */
export function firingSinkErrors(events: readonly JournaledEvent[]): AlertPayload[] {
  return firingAlertsOfRule(events, "sink_error");
}
