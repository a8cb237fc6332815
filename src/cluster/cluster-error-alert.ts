// `cluster_error` as an alert: raised on the member's own bus (log sink, WebSocket clients, firing set) while it
// cannot reach NATS, resolved when it can again. It is never journaled: the cluster's log is what is out of reach.
import { merge, filter } from "rxjs";
import type { AlertPayload, BusEvent } from "../domain/events.js";
import { fingerprintOf } from "../domain/fingerprint.js";
import type { EventHub, EventSource } from "../pipeline/event-hub.js";

/** The rule of the alert. */
export const CLUSTER_ERROR_RULE = "cluster_error";

/**
 * The transition the member's NATS state asks for, or null: firing when `error` appears (the first one names the
 * cause), resolved when it clears; nothing while it stays as it is.
 */
export function clusterErrorTransition(
  firing: AlertPayload | null,
  error: string | null,
  memberId: string,
  nowMs: number,
): AlertPayload | null {
  if (error !== null && firing === null) {
    const labels = { member: memberId };
    return {
      fingerprint: fingerprintOf(CLUSTER_ERROR_RULE, labels),
      status: "firing",
      rule: CLUSTER_ERROR_RULE,
      severity: "critical",
      labels,
      summary: `cluster member ${memberId} cannot reach NATS (${error}): it stops polling once its lease could have expired, and journals nothing until NATS answers again`,
      value: null,
      threshold: null,
      startsAt: new Date(nowMs).toISOString(),
      endsAt: null,
      reason: "first",
      context: { error },
    };
  }
  if (error === null && firing !== null)
    return {
      ...firing,
      status: "resolved",
      reason: "resolved",
      endsAt: new Date(nowMs).toISOString(),
      summary: `cluster member ${memberId} reaches NATS again`,
      context: {},
    };
  return null;
}

/** What the alert watches and where it announces. */
export interface ClusterErrorAlertDeps {
  readonly memberId: string;
  /** Why the member cannot reach NATS now (null when it can). */
  readonly error: () => string | null;
  readonly hub: Pick<EventHub, "announceLocal">;
  readonly nowMs: () => number;
}

/** The alert's state: `check` announces a transition when the member's NATS state changed. */
export interface ClusterErrorAlert {
  check(): void;
}

/** Create the alert (nothing firing). */
export function createClusterErrorAlert(deps: ClusterErrorAlertDeps): ClusterErrorAlert {
  let firing: AlertPayload | null = null;
  return {
    check() {
      const next = clusterErrorTransition(firing, deps.error(), deps.memberId, deps.nowMs());
      if (next === null) return;
      firing = next.status === "firing" ? next : null;
      deps.hub.announceLocal(next);
    },
  };
}

/** Whether an event is a `cluster_error` transition (always local: never in the cluster's log). */
export function isClusterErrorEvent(event: BusEvent): boolean {
  return event.type === "alert" && event.alert.rule === CLUSTER_ERROR_RULE;
}

/** `view` (a filtered source, e.g. a member's own events) with the `cluster_error` transitions of `hub` added. */
export function withLocalAlerts(view: EventSource, hub: EventSource): EventSource {
  if (view === hub) return hub;
  const events$ = merge(
    view.events$.pipe(filter((event) => !isClusterErrorEvent(event))),
    hub.events$.pipe(filter(isClusterErrorEvent)),
  );
  return Object.assign(Object.create(view) as EventSource, { events$ });
}
