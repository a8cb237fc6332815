// Recovers the `sink_error` alerts still firing at the end of a journal (they are raised by sinks, not the engine).
import type { AlertPayload, JournaledEvent } from "../domain/events.js";

/** The last announced state of each `sink_error` fingerprint in `events`, keeping those still firing. */
export function firingSinkErrors(events: readonly JournaledEvent[]): AlertPayload[] {
  const last = new Map<string, AlertPayload>();
  for (const event of events) {
    if (event.type === "alert" && event.alert.rule === "sink_error")
      last.set(event.alert.fingerprint, event.alert);
  }
  return [...last.values()].filter((alert) => alert.status === "firing");
}
