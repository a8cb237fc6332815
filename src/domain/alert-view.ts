// Read-only views of the alert engine for the operator API: pending alerts and what inhibits an alert.
import type { AlertRecord, EngineState } from "./alert-engine.js";
import { buildPayload } from "./alert-payload.js";
import type { AlertPayload } from "./events.js";
import { toIso } from "./format.js";
import { inhibitsOthers, type RuleConfig } from "./rules/index.js";

/** An alert whose condition holds but whose `for` has not elapsed (or that an inhibitor holds back). */
export interface PendingAlert {
  /** The payload it would announce now; `startsAt` is when it became pending. */
  readonly alert: AlertPayload;
  /** Null only for a record restored without its time (then `startsAt` is now). */
  readonly pendingSinceMs: number | null;
  /** When `for` elapses (it fires on the next tick after, unless it clears or is inhibited); null when unknown or its rule is gone. */
  readonly firesAtMs: number | null;
  /** Fingerprints of the firing inhibitors (upstream_error) holding it; empty when none. */
  readonly inhibitedBy: readonly string[];
}

/**
 * Fingerprints of the firing inhibitors per target they inhibit, as the engine counts them: an inhibiting
 * record counts on its first target while it fires with its condition holding (see countInhibitor).
 */
export function inhibitorsByTarget(engine: EngineState): ReadonlyMap<string, readonly string[]> {
  const byTarget = new Map<string, string[]>();
  if (engine.inhibitingFiring.size === 0) return byTarget;
  for (const record of engine.alerts.values()) {
    if (!inhibitsOthers(record.ruleKind) || record.status !== "firing" || !record.rawActive) continue;
    const targetId = record.targetIds[0];
    if (targetId === undefined) continue;
    const list = byTarget.get(targetId);
    if (list === undefined) byTarget.set(targetId, [record.fingerprint]);
    else list.push(record.fingerprint);
  }
  return byTarget;
}

/** The inhibitors holding `record` (none for an inhibitor itself, which is never muted), sorted, without repeats. */
export function inhibitorsOf(
  record: Pick<AlertRecord, "ruleKind" | "targetIds">,
  byTarget: ReadonlyMap<string, readonly string[]>,
): readonly string[] {
  if (byTarget.size === 0 || inhibitsOthers(record.ruleKind)) return [];
  const found = new Set<string>();
  for (const id of record.targetIds) for (const fingerprint of byTarget.get(id) ?? []) found.add(fingerprint);
  return [...found].sort();
}

/** The engine's pending records as alerts, in no particular order; `rules` gives each its `for`. */
export function pendingAlertsOf(
  engine: EngineState,
  rules: readonly RuleConfig[],
  nowMs: number,
): readonly PendingAlert[] {
  const pending: AlertRecord[] = [];
  for (const record of engine.alerts.values()) if (record.status === "pending") pending.push(record);
  if (pending.length === 0) return [];
  const byTarget = inhibitorsByTarget(engine);
  return pending.map((record) => {
    const rule = rules.find((candidate) => candidate.id === record.ruleId && candidate.enabled);
    const payload = buildPayload(record, "firing", "first", nowMs, null, null);
    const sinceMs = Number.isFinite(record.pendingSinceMs) ? record.pendingSinceMs : null;
    return {
      alert: { ...payload, startsAt: toIso(sinceMs ?? nowMs) },
      pendingSinceMs: sinceMs,
      firesAtMs: rule === undefined || sinceMs === null ? null : sinceMs + rule.forMs,
      inhibitedBy: inhibitorsOf(record, byTarget),
    };
  });
}
