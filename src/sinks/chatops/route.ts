// Per-sink routing: which alert transitions a sink receives (filters, send-resolved, no self-reported errors).
import { ruleFilterMatches, severityRank, type AlertPayload } from "../../domain/events.js";
import type { AlertSinkConfig } from "../../config/types.js";

/**
 * True when `sink` should deliver `alert`. Empty `rules`/`pairs` match everything; a `pairs` filter only
 * passes alerts that carry a matching `pair` label; `labels` must all match exactly. The watchdog is routed
 * by `rules` alone (see `routesWatchdog`).
 */
export function routeAlert(sink: AlertSinkConfig, alert: AlertPayload): boolean {
  if (!sink.enabled) return false;
  // A sink never reports its own failure to itself: it is the one channel known to be broken.
  if (alert.rule === "sink_error" && alert.labels.sink === sink.name) return false;
  if (alert.status === "resolved" && !sink.sendResolved) return false;
  if (alert.rule === "watchdog") return routesWatchdog(sink);
  if (severityRank(alert.severity) < severityRank(sink.minSeverity)) return false;
  if (sink.rules.length > 0 && !ruleFilterMatches({ has: (name) => sink.rules.includes(name) }, alert))
    return false;
  if (sink.pairs.length > 0) {
    const pair = alert.labels.pair;
    if (pair === undefined || !sink.pairs.includes(pair)) return false;
  }
  for (const [name, value] of Object.entries(sink.labels)) if (alert.labels[name] !== value) return false;
  return true;
}

/**
 * The always-firing watchdog must never page anyone by accident: it is not part of "every rule" (`rules: []`)
 * except for Alertmanager, whose setups route `alertname="Watchdog"` to a dead-man's switch; any sink gets
 * it when its `rules` names `watchdog`. Severity, pair and label filters do not apply: asking is enough.
 */
export function routesWatchdog(sink: AlertSinkConfig): boolean {
  if (sink.rules.includes("watchdog")) return true;
  return sink.kind === "alertmanager" && sink.rules.length === 0;
}
