// Alertmanager API v2 renderer: postable alerts for `POST /api/v2/alerts`, with Prometheus-style `endsAt`.
import type { AlertPayload } from "../../domain/events.js";
import { latestPerFingerprint } from "./format.js";
import type { AnyMessage, RenderedRequest } from "./types.js";

/** Prometheus marks a firing alert valid for 4 resend intervals, so a missed re-send does not resolve it. */
export const ALERTMANAGER_VALIDITY_RESENDS = 4;

/** The API path under the configured Alertmanager base URL. */
export function alertmanagerUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/api/v2/alerts`;
}

/** Per-request facts of the Alertmanager renderer. */
export interface AlertmanagerOptions {
  readonly nowMs: number;
  readonly resendIntervalMs: number;
  /** Link back to the alert in this daemon (Alertmanager's `generatorURL`), by fingerprint. */
  readonly generatorUrl?: (fingerprint: string) => string;
}

/** Render alerts as an Alertmanager postableAlerts array (a batch or refresh becomes one multi-alert POST). */
export function renderAlertmanager(message: AnyMessage, options: AlertmanagerOptions): RenderedRequest {
  const alerts = alertsOf(message);
  const body = alerts.map((alert) => postableAlert(alert, options));
  return { body: JSON.stringify(body), headers: { "content-type": "application/json" } };
}

/** The alerts a message carries, one postable alert each (a batch keeps the latest transition per alert). */
function alertsOf(message: AnyMessage): readonly AlertPayload[] {
  switch (message.kind) {
    case "alert":
      return [message.event.alert];
    case "refresh":
      return message.alerts;
    case "group":
      return message.alerts.map((listed) => listed.alert);
    case "batch": {
      const latest = latestPerFingerprint(message.events);
      return [...latest.firing, ...latest.resolved];
    }
  }
}

/**
 * `alertname` as Alertmanager users route on it: the rule's `id` when the operator named the rule (label
 * `rule_id`), "Watchdog" for the watchdog (the name Alertmanager setups already route to a dead-man's
 * switch), else the rule kind.
 */
export function alertnameOf(alert: AlertPayload): string {
  return alert.labels.rule_id ?? (alert.rule === "watchdog" ? "Watchdog" : alert.rule);
}

function postableAlert(alert: AlertPayload, options: AlertmanagerOptions): Readonly<Record<string, unknown>> {
  const labels: Record<string, string> = {};
  for (const [name, value] of Object.entries(alert.labels)) labels[labelName(name)] = value;
  labels.alertname = alertnameOf(alert);
  // The kind stays routable when alertname is a rule id.
  if (labels.alertname !== alert.rule) labels.rule = alert.rule;
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
    ...(options.generatorUrl === undefined ? {} : { generatorURL: options.generatorUrl(alert.fingerprint) }),
  };
}

/** Alertmanager label names must match [a-zA-Z_][a-zA-Z0-9_]*. */
function labelName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_]/g, "_");
  return /^[a-zA-Z_]/.test(cleaned) ? cleaned : `_${cleaned}`;
}
