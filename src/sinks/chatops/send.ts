// One notification sent to a sink: render, deliver once, time and count the finished attempt. Shared by the
// single daemon's sink worker and the cluster's sink consumers, so both measure a delivery the same way.
import type { Dispatcher } from "undici";
import type { AlertSinkConfig } from "../../config/types.js";
import type { Timers } from "../../http-client.js";
import type { Metrics } from "../../metrics.js";
import { deliver, outcomeLabel, type DeliveryOutcome } from "./delivery.js";
import { renderFor } from "./render.js";
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
