// PagerDuty Events API v2 renderer: trigger/resolve events deduplicated by the alert fingerprint.
import type { AlertEvent, Severity } from "../../domain/events.js";
import { alertSubject, truncate } from "./format.js";
import type { RenderedRequest } from "./types.js";

// Events v2 limits: summary 1024 chars, dedup_key 255 chars.
const SUMMARY_MAX_CHARS = 1024;
const DEDUP_KEY_MAX_CHARS = 255;

/** Our severities mapped to Events v2 `payload.severity` (critical|error|warning|info). */
export const PAGERDUTY_SEVERITY: Readonly<Record<Severity, "critical" | "warning" | "info">> = {
  critical: "critical",
  warning: "warning",
  info: "info",
};

/**
 * Render one alert transition as an Events v2 event. PagerDuty has no batch endpoint and keys state by
 * `dedup_key`, so it never receives digests: the sink paces its events instead (see chatops.ts).
 */
export function renderPagerDuty(
  event: AlertEvent,
  options: { readonly routingKey: string },
): RenderedRequest {
  const { alert } = event;
  const dedupKey = truncate(alert.fingerprint, DEDUP_KEY_MAX_CHARS);
  const base = { routing_key: options.routingKey, dedup_key: dedupKey };
  const body =
    alert.status === "resolved"
      ? { ...base, event_action: "resolve" }
      : {
          ...base,
          event_action: "trigger",
          client: "pragma-monitor",
          payload: {
            summary: truncate(alert.summary === "" ? alertSubject(alert) : alert.summary, SUMMARY_MAX_CHARS),
            source: "pragma-monitor",
            severity: PAGERDUTY_SEVERITY[alert.severity],
            timestamp: alert.startsAt,
            component: alert.labels.pair ?? alert.labels.vault ?? alert.labels.publisher ?? alert.rule,
            group: alert.labels.market ?? alert.labels.network ?? "pragma",
            class: alert.rule,
            custom_details: {
              rule: alert.rule,
              labels: alert.labels,
              value: alert.value,
              threshold: alert.threshold,
              reason: alert.reason,
              seq: event.seq,
              context: alert.context,
            },
          },
        };
  return { body: JSON.stringify(body), headers: { "content-type": "application/json" } };
}
