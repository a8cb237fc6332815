// Validation of outbox payloads read back from disk: a DESIGN §3 alert event.
import { RULE_KINDS, SEVERITIES, type AlertEvent } from "../../domain/events.js";

/** True when `value` has the shape of an AlertEvent (checked at the disk edge only). */
export function isAlertEvent(value: unknown): value is AlertEvent {
  if (typeof value !== "object" || value === null) return false;
  const event = value as { type?: unknown; seq?: unknown; alert?: unknown };
  if (event.type !== "alert" || typeof event.seq !== "number") return false;
  if (typeof event.alert !== "object" || event.alert === null) return false;
  const alert = event.alert as Record<string, unknown>;
  return (
    typeof alert.fingerprint === "string" &&
    (alert.status === "firing" || alert.status === "resolved") &&
    (RULE_KINDS as readonly unknown[]).includes(alert.rule) &&
    (SEVERITIES as readonly unknown[]).includes(alert.severity) &&
    typeof alert.labels === "object" &&
    alert.labels !== null &&
    typeof alert.summary === "string" &&
    typeof alert.startsAt === "string" &&
    typeof alert.context === "object" &&
    alert.context !== null
  );
}
