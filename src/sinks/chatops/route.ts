// Per-sink routing: which alert transitions a sink receives (filters, send-resolved, no self-reported errors).
import { ruleFilterMatches, severityRank, type AlertPayload } from "../../domain/events.js";
import type { SinkConfig } from "../../config/types.js";

/**
 * True when `sink` should deliver `alert`. Empty `rules`/`pairs` match everything; a `pairs` filter only
 * passes alerts that carry a matching `pair` label; `labels` must all match exactly.
 */
export function routeAlert(sink: SinkConfig, alert: AlertPayload): boolean {
  if (!sink.enabled) return false;
  // A sink never reports its own failure to itself: it is the one channel known to be broken.
  if (alert.rule === "sink_error" && alert.labels.sink === sink.name) return false;
  if (alert.status === "resolved" && !sink.sendResolved) return false;
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
