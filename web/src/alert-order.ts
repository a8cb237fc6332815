// The order of the firing-alert list and the anchors of its items (pure, no DOM): children under their parent.
import type { AlertPayload } from "./types.js";

const SEVERITY_RANK: Readonly<Record<string, number>> = { critical: 0, warning: 1, info: 2 };

/**
 * Firing alerts, most severe first, then the longest firing first; a child (`causedBy` a firing alert) comes right
 * after its parent instead, so the list reads as causes with their symptoms under them.
 */
export function sortAlerts(alerts: Iterable<AlertPayload>): AlertPayload[] {
  const sorted = [...alerts].sort(
    (a, b) =>
      (SEVERITY_RANK[a.severity] ?? 3) - (SEVERITY_RANK[b.severity] ?? 3) ||
      Date.parse(a.startsAt) - Date.parse(b.startsAt) ||
      (a.fingerprint < b.fingerprint ? -1 : 1),
  );
  const firing = new Set(sorted.map((alert) => alert.fingerprint));
  const hasParent = (alert: AlertPayload): boolean =>
    alert.causedBy !== undefined && alert.causedBy !== alert.fingerprint && firing.has(alert.causedBy);
  const children = new Map<string, AlertPayload[]>();
  for (const alert of sorted.filter(hasParent)) {
    const siblings = children.get(alert.causedBy!) ?? [];
    siblings.push(alert);
    children.set(alert.causedBy!, siblings);
  }
  // cause rules are over plain alerts: a parent is never a child itself, so one level is the whole tree
  return sorted
    .filter((alert) => !hasParent(alert))
    .flatMap((alert) => [alert, ...(children.get(alert.fingerprint) ?? [])]);
}

/** The element id of a firing alert's list item (a child links to its parent with it). */
export function alertAnchor(fingerprint: string): string {
  return `alert-${fingerprint.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}
