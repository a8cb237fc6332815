// PagerDuty Events API v2 renderer: trigger/resolve events deduplicated by group key (or alert fingerprint).
import type { AlertEvent, Severity } from "../../domain/events.js";
import { fnv1a64Hex } from "../../domain/fingerprint.js";
import { alertSubject, groupHeadline, truncate, worstFiring } from "./format.js";
import type { ChatMessage, GroupMessage, RenderedRequest } from "./types.js";

// Events v2 limits: summary 1024 chars, dedup_key 255 chars.
const SUMMARY_MAX_CHARS = 1024;
const DEDUP_KEY_MAX_CHARS = 255;

/** Our severities mapped to Events v2 `payload.severity` (critical|error|warning|info). */
export const PAGERDUTY_SEVERITY: Readonly<Record<Severity, "critical" | "warning" | "info">> = {
  critical: "critical",
  warning: "warning",
  info: "info",
};

/** Alerts a group incident's custom_details list (PagerDuty takes 512 KB per event). */
const MAX_LISTED_ALERTS = 100;

/**
 * Render a notification as an Events v2 event: grouping off, one per alert transition (`dedup_key` =
 * fingerprint); grouping on, one incident per group (`dedup_key` = group key), triggered (or updated)
 * while any alert of the group fires and resolved once the whole group is.
 */
export function renderPagerDuty(
  message: ChatMessage,
  options: { readonly routingKey: string },
): RenderedRequest {
  return message.kind === "alert" ? renderAlertEvent(message.event, options) : renderGroup(message, options);
}

/** A group's incident: trigger with the group's alerts in custom_details, or resolve. */
function renderGroup(message: GroupMessage, options: { readonly routingKey: string }): RenderedRequest {
  const dedupKey =
    message.key.length <= DEDUP_KEY_MAX_CHARS ? message.key : `group-${fnv1a64Hex(message.key)}`;
  const base = { routing_key: options.routingKey, dedup_key: dedupKey };
  const worst = worstFiring(message);
  const body =
    message.status === "resolved" || worst === undefined
      ? { ...base, event_action: "resolve" }
      : {
          ...base,
          event_action: "trigger",
          client: "pragma-monitor",
          payload: {
            summary: truncate(groupHeadline(message), SUMMARY_MAX_CHARS),
            source: "pragma-monitor",
            severity: PAGERDUTY_SEVERITY[worst],
            timestamp: message.alerts[0]?.alert.startsAt ?? new Date(0).toISOString(),
            component: message.commonLabels.pair ?? "pragma",
            group: message.commonLabels.market ?? message.commonLabels.network ?? "pragma",
            class: message.alerts[0]?.alert.rule ?? "group",
            custom_details: {
              group_key: message.key,
              group_labels: message.labels,
              common_labels: message.commonLabels,
              seqs: message.events.map((event) => event.seq),
              alerts: message.alerts.slice(0, MAX_LISTED_ALERTS).map(({ state, seq, alert }) => ({
                state,
                seq,
                fingerprint: alert.fingerprint,
                rule: alert.rule,
                severity: alert.severity,
                summary: alert.summary,
                labels: alert.labels,
              })),
              more_alerts: Math.max(0, message.alerts.length - MAX_LISTED_ALERTS),
            },
          },
        };
  return { body: JSON.stringify(body), headers: { "content-type": "application/json" } };
}

/** One alert transition as an Events v2 event (`dedup_key` = fingerprint). */
function renderAlertEvent(event: AlertEvent, options: { readonly routingKey: string }): RenderedRequest {
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
