// The stdout sink: one pino JSON line per alert transition and lifecycle event, level by severity.
import type { Logger } from "pino";
import type { Subscription } from "rxjs";
import type { BusEvent, Severity } from "../domain/events.js";
import type { EventSource } from "../pipeline/event-hub.js";

const LEVEL_BY_SEVERITY: Readonly<Record<Severity, "info" | "warn" | "error">> = {
  info: "info",
  warning: "warn",
  critical: "error",
};

/** Write one log line for a journaled event (price ticks are not logged). */
export function logEvent(logger: Logger, event: BusEvent): void {
  switch (event.type) {
    case "alert": {
      const { alert } = event;
      const level = alert.status === "resolved" ? "info" : LEVEL_BY_SEVERITY[alert.severity];
      logger[level]({ event: "alert", seq: event.seq, alert }, `[${alert.status}] ${alert.summary}`);
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

/** Subscribe the stdout sink to the hub; returns the subscription to stop it. */
export function startLogSink(source: EventSource, logger: Logger): Subscription {
  const alertLogger = logger.child({ component: "alerts" });
  return source.events$.subscribe((event) => logEvent(alertLogger, event));
}
