// Feeding one sink worker: the alerts its routing selects, live from the bus and from the journal when it opens.
import type { Logger } from "pino";
import type { AlertSinkConfig } from "../../config/types.js";
import { isMutedTransition, type AlertEvent } from "../../domain/events.js";
import type { Metrics } from "../../metrics.js";
import type { EventSource } from "../../pipeline/event-hub.js";
import { GROUP_BY_EACH } from "./group-schedule.js";
import { routeAlert } from "./route.js";
import type { SinkWorker } from "./sink-worker.js";

/**
 * Give `worker` the alert if `sink` routes it, else only advance its high-water mark (and stop re-sending it).
 * A transition a silence mutes (`silencedBy`) or a firing cause alert holds (`causedBy`) is not notified; the
 * hub decided that once, for every sink. A grouping sink still takes in a firing child's adoption (the
 * re-announcement with `causedBy`): a child that fired within the group wait, before its parent, then is left
 * out of the group's notification instead of being paged on its own.
 */
export function dispatchTo(
  sink: AlertSinkConfig,
  worker: Pick<SinkWorker, "enqueue" | "skip" | "forget">,
  event: AlertEvent,
  metrics: { readonly sinkSilenced: { inc(labels: { readonly sink: string }): void } },
): void {
  const routed = routeAlert(sink, event.alert);
  if (routed && isMutedTransition(event.alert)) {
    metrics.sinkSilenced.inc({ sink: sink.name });
    return isAdoption(event.alert) && groupsNotifications(sink)
      ? worker.enqueue(event)
      : worker.skip(event.seq);
  }
  if (routed) return worker.enqueue(event);
  worker.skip(event.seq);
  if (event.alert.status === "resolved" && routeAlert({ ...sink, sendResolved: true }, event.alert))
    worker.forget(event.alert.fingerprint);
}

/** A firing alert re-announced as the child of a cause alert, and muted by nothing else. */
function isAdoption(alert: AlertEvent["alert"]): boolean {
  return (
    alert.status === "firing" &&
    alert.reason === "repeat" &&
    alert.causedBy !== undefined &&
    (alert.silencedBy?.length ?? 0) === 0
  );
}

/** Whether `sink` groups its notifications (not the Alertmanager sink, not `groupBy: ["..."]`). */
function groupsNotifications(sink: AlertSinkConfig): boolean {
  return sink.kind !== "alertmanager" && !sink.groupBy.includes(GROUP_BY_EACH);
}

/**
 * Give a freshly opened sink what the journal holds after its high-water mark: alerts published but
 * not yet in its outbox when the daemon died (kill -9 between the journal write and the outbox write).
 */
export function catchUp(
  sink: AlertSinkConfig,
  worker: SinkWorker,
  deps: { readonly source: EventSource; readonly logger: Logger; readonly metrics: Metrics },
): void {
  const { logger, metrics, source } = deps;
  const { gap, events } = source.replay(worker.highWater);
  if (gap !== null) {
    logger.error({ sink: sink.name, ...gap }, "journal no longer holds alerts this sink missed");
    metrics.droppedEvents.inc({ component: "chatops", reason: "journal_gap" }, gap.to - gap.from + 1);
  }
  let replayed = 0;
  for (const event of events) {
    if (event.type !== "alert") continue;
    // A previous run's watchdog says nothing about this one: it fires again once this run is ready.
    if (event.alert.rule === "watchdog") {
      worker.skip(event.seq);
      continue;
    }
    const muted = isMutedTransition(event.alert);
    if (routeAlert(sink, event.alert) && event.seq > worker.highWater && !muted) replayed++;
    dispatchTo(sink, worker, event, metrics);
  }
  if (replayed > 0)
    logger.warn({ sink: sink.name, replayed }, "re-queued journaled alerts missing from the outbox");
}
