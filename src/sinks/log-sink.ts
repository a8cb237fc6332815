// The stdout sink: one pino JSON line per alert transition and lifecycle event, level by severity.
import type { Logger } from "pino";
import type { Subscription } from "rxjs";
import type { AlertPayload, BusEvent, Severity } from "../domain/events.js";
import type { EventSource } from "../pipeline/event-hub.js";

const LEVEL_BY_SEVERITY: Readonly<Record<Severity, "info" | "warn" | "error">> = {
  info: "info",
  warning: "warn",
  critical: "error",
};

/**
 * The human line of a transition, what `journalctl` shows first: status, severity and rule, then the summary,
 * e.g. `[firing critical] price_change: BTC/USD moved +5.02% in 1min (threshold 2%)`. The full event stays under `alert`.
 */
export function alertMessage(alert: AlertPayload): string {
  const repeat = alert.reason === "repeat" ? " repeat" : "";
  return `[${alert.status} ${alert.severity}${repeat}] ${alert.rule}: ${alert.summary}`;
}

/**
 * The `alert` object on one line for pretty output (the message already says status, severity and summary):
 * fingerprint, labels, value and threshold, e.g. `9f2c41d0a7b3e6f1 pair=BTC/USD window=1min value=0.0502 threshold=0.02`.
 */
export function alertBrief(alert: AlertPayload): string {
  const labels = Object.entries(alert.labels).map(([key, value]) => `${key}=${value}`);
  const numbers = [
    ...(alert.value === null ? [] : [`value=${alert.value}`]),
    ...(alert.threshold === null ? [] : [`threshold=${alert.threshold}`]),
  ];
  return [alert.fingerprint, ...labels, ...numbers].join(" ");
}

/** Write one log line for a journaled event (price ticks are not logged). */
export function logEvent(logger: Logger, event: BusEvent): void {
  switch (event.type) {
    case "alert": {
      const { alert } = event;
      const level = alert.status === "resolved" ? "info" : LEVEL_BY_SEVERITY[alert.severity];
      logger[level]({ event: "alert", seq: event.seq, alert }, alertMessage(alert));
      return;
    }
    case "lifecycle":
      logger.info(
        { event: "lifecycle", seq: event.seq, phase: event.event, detail: event.detail },
        `lifecycle ${event.event}`,
      );
      return;
    case "price":
      return;
  }
}

/** Subscribe the stdout sink to the hub with the `alerts` component logger; returns the subscription to stop it. */
export function startLogSink(source: EventSource, logger: Logger): Subscription {
  return source.events$.subscribe((event) => logEvent(logger, event));
}
