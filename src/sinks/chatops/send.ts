// One notification sent to a sink: render, deliver once, time and count the finished attempt. Shared by the
// single daemon's sink worker and the cluster's sink consumers, so both measure a delivery the same way.
import type { Dispatcher } from "undici";
import type { AlertSinkConfig } from "../../config/types.js";
import type { Timers } from "../../http-client.js";
import type { Metrics } from "../../metrics.js";
import { deliver, outcomeLabel, type DeliveryOutcome } from "./delivery.js";
import { commonLabelsOf } from "./format.js";
import type { GroupEntry, GroupMode, GroupNotification } from "./group-schedule.js";
import { renderFor } from "./render.js";
import type { RefreshAction, SendAction, ScheduleEntry } from "./sink-schedule.js";
import type { AlertPayload } from "../../domain/events.js";
import type { AnyMessage } from "./types.js";

/** What a send needs besides the message: transport, clock, metrics, and the sink's alert links. */
export interface SendDeps {
  readonly dispatcher: Dispatcher;
  readonly metrics: Pick<Metrics, "sinkDeliveryDuration" | "sinkDeliveries">;
  readonly nowMs: () => number;
  readonly timers: Timers;
  readonly generatorUrl?: ((fingerprint: string) => string) | undefined;
}

/** Where a send goes: the sink, its endpoint URL (may hold a secret) and the signal that aborts it. */
export interface SendTarget {
  readonly sink: AlertSinkConfig;
  readonly url: string;
  readonly stopSignal: AbortSignal;
}

/**
 * Render `message` for the sink under `deliveryId` and send it once; a finished attempt (not aborted) is
 * timed (`sink_delivery_duration_seconds`) and counted by outcome (`sink_deliveries_total`).
 */
export async function sendMessage(
  deps: SendDeps,
  target: SendTarget,
  message: AnyMessage,
  deliveryId: string,
): Promise<DeliveryOutcome> {
  const { nowMs, metrics } = deps;
  const { sink } = target;
  const rendered = renderFor(sink, message, {
    nowMs: nowMs(),
    deliveryId,
    ...(deps.generatorUrl === undefined ? {} : { generatorUrl: deps.generatorUrl }),
  });
  const startedAtMs = nowMs();
  const outcome = await deliver({
    dispatcher: deps.dispatcher,
    url: target.url,
    rendered,
    timeoutMs: sink.timeoutMs,
    timers: deps.timers,
    nowMs,
    stopSignal: target.stopSignal,
  });
  if (outcome.kind === "aborted") return outcome;
  const labels = { sink: sink.name };
  metrics.sinkDeliveryDuration.observe(labels, (nowMs() - startedAtMs) / 1000);
  metrics.sinkDeliveries.inc({ ...labels, outcome: outcomeLabel(outcome) });
  return outcome;
}

/**
 * The message a scheduler action sends: the firing alerts (a re-send), every pending transition (a batch,
 * Alertmanager), the one transition (grouping off) or a group's notification.
 */
export function actionMessage<E extends ScheduleEntry>(
  mode: GroupMode,
  action: SendAction<E> | RefreshAction,
  firing: readonly AlertPayload[],
): AnyMessage {
  if (action.kind === "refresh") return { kind: "refresh", alerts: firing };
  const { notification } = action;
  const events = notification.entries.map((entry) => entry.payload);
  switch (mode.kind) {
    case "batch":
      return { kind: "batch", events };
    case "each":
      return { kind: "alert", event: (notification.entries[0] as E).payload };
    case "group":
      return groupMessageOf(notification, events);
  }
}

/** A group notification as the renderers take it. */
function groupMessageOf<E extends GroupEntry>(
  notification: GroupNotification<E>,
  events: readonly E["payload"][],
): AnyMessage {
  const { key, labels, status, alerts, repeat } = notification;
  const commonLabels = commonLabelsOf(alerts.map((listed) => listed.alert));
  return { kind: "group", key, labels, commonLabels, status, alerts, events, repeat };
}
