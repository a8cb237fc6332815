// Alertmanager API v2 renderer: postable alerts for `POST /api/v2/alerts`, with Prometheus-style `endsAt`.
import type { AlertPayload } from "../../domain/events.js";
import { groupDigest } from "./format.js";
import type { AnyMessage, RenderedRequest } from "./types.js";

/** Prometheus marks a firing alert valid for 4 resend intervals, so a missed re-send does not resolve it. */
export const ALERTMANAGER_VALIDITY_RESENDS = 4;

/** The API path under the configured Alertmanager base URL. */
export function alertmanagerUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/api/v2/alerts`;
}

/** Render alerts as an Alertmanager postableAlerts array (a digest or refresh becomes one multi-alert POST). */
export function renderAlertmanager(
  message: AnyMessage,
  options: { readonly nowMs: number; readonly resendIntervalMs: number; readonly generatorUrl?: string },
): RenderedRequest {
  const alerts =
    message.kind === "alert"
      ? [message.event.alert]
      : message.kind === "refresh"
        ? message.alerts
        : [...groupDigest(message.events).firing, ...groupDigest(message.events).resolved];
  const body = alerts.map((alert) => postableAlert(alert, options));
  return { body: JSON.stringify(body), headers: { "content-type": "application/json" } };
}

function postableAlert(
  alert: AlertPayload,
  options: { readonly nowMs: number; readonly resendIntervalMs: number; readonly generatorUrl?: string },
): Readonly<Record<string, unknown>> {
  const labels: Record<string, string> = {};
  for (const [name, value] of Object.entries(alert.labels)) labels[labelName(name)] = value;
  labels.alertname = alert.rule;
  labels.severity = alert.severity;
  const annotations: Record<string, string> = { summary: alert.summary, fingerprint: alert.fingerprint };
  if (alert.value !== null) annotations.value = String(alert.value);
  if (alert.threshold !== null) annotations.threshold = String(alert.threshold);
  for (const [key, value] of Object.entries(alert.context))
    if (value !== null) annotations[`context_${labelName(key)}`] = String(value);
  const endsAt =
    alert.status === "resolved"
      ? (alert.endsAt ?? new Date(options.nowMs).toISOString())
      : new Date(options.nowMs + ALERTMANAGER_VALIDITY_RESENDS * options.resendIntervalMs).toISOString();
  return {
    labels,
    annotations,
    startsAt: alert.startsAt,
    endsAt,
    ...(options.generatorUrl === undefined ? {} : { generatorURL: options.generatorUrl }),
  };
}

/** Alertmanager label names must match [a-zA-Z_][a-zA-Z0-9_]*. */
function labelName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_]/g, "_");
  return /^[a-zA-Z_]/.test(cleaned) ? cleaned : `_${cleaned}`;
}
