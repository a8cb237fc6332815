// Operator-set static labels (`alerts.externalLabels`) stamped on every alert as it leaves the alert engine.
import type { AlertLabels, AlertPayload } from "./events.js";

/** Prometheus label-name syntax (names starting with "__" are reserved to Prometheus itself). */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * Label names the daemon sets itself (DESIGN §3, `rule_id`, `sink`) or that the Alertmanager sink writes
 * (`alertname`, `severity`, `rule`): an external label may not take one of them.
 */
export const RESERVED_LABEL_NAMES: ReadonlySet<string> = new Set([
  "pair",
  "market",
  "entry_type",
  "network",
  "source",
  "publisher",
  "window",
  "endpoint",
  "vault",
  "sink",
  "rule_id",
  "rule",
  "alertname",
  "severity",
]);

/** Why `name` cannot be an external label, or undefined when it can. */
export function externalLabelNameProblem(name: string): string | undefined {
  if (!LABEL_NAME.test(name)) return "must match [a-zA-Z_][a-zA-Z0-9_]* (Prometheus label-name syntax)";
  if (name.startsWith("__")) return 'must not start with "__" (reserved by Prometheus)';
  if (RESERVED_LABEL_NAMES.has(name)) return `"${name}" is a label pragma-monitor sets itself`;
  return undefined;
}

/**
 * `alert` with `external` labels added; the alert's own label wins on a clash. The fingerprint is left as
 * it is: it identifies the condition (rule + its own labels), which is the same whoever runs the daemon,
 * and the alert state, journal and outboxes stay valid when the operator renames `env` or `region`.
 */
export function withExternalLabels(alert: AlertPayload, external: AlertLabels): AlertPayload {
  let missing = false;
  for (const name in external)
    if (alert.labels[name] === undefined) {
      missing = true;
      break;
    }
  if (!missing) return alert;
  return { ...alert, labels: { ...external, ...alert.labels } };
}
