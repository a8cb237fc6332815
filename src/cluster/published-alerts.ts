// Which of the daemon's own alerts (sink_error, watchdog, monitor_stalled) this process published and still fire:
// in cluster mode every member sees every member's, and only the publisher re-announces its own.
import { DAEMON_RULE_KINDS } from "../domain/events.js";
import type { UnnumberedEvent } from "../state/journal.js";

/** The firing daemon alerts this process published. */
export interface PublishedAlerts {
  /** Called with each event this process sends to the cluster's log. */
  note(event: UnnumberedEvent): void;
  has(fingerprint: string): boolean;
}

const DAEMON_RULES: ReadonlySet<string> = new Set(DAEMON_RULE_KINDS);

/** Track firing daemon alerts by fingerprint (a resolve forgets one, so the set holds only what fires). */
export function createPublishedAlerts(): PublishedAlerts {
  const firing = new Set<string>();
  return {
    note(event) {
      if (event.type !== "alert" || !DAEMON_RULES.has(event.alert.rule)) return;
      if (event.alert.status === "firing") firing.add(event.alert.fingerprint);
      else firing.delete(event.alert.fingerprint);
    },
    has: (fingerprint) => firing.has(fingerprint),
  };
}
