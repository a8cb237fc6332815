// Persisting the alert engine: a JSON-safe export of pending/firing alerts and the import of validated state.
import {
  countInhibitor,
  createEngineState,
  dropRecord,
  putRecord,
  type AlertRecord,
  type EngineState,
} from "./alert-engine.js";
import type { AlertPayload, RuleKind } from "./events.js";
import { inhibitsOthers, isRuleConfigKind, restoredKeyOf } from "./rules/index.js";

/** One pending or firing alert with its timing, as written to disk. */
export interface PersistedAlert {
  readonly fingerprint: string;
  readonly ruleId: string;
  readonly rule: RuleKind;
  readonly labels: Readonly<Record<string, string>>;
  readonly targetIds: readonly string[];
  readonly scopeKey: string;
  readonly status: "pending" | "firing";
  readonly rawActive: boolean;
  readonly pendingSinceMs: number | null;
  readonly startsAtMs: number | null;
  readonly lastAnnouncedMs: number | null;
  readonly flipTimesMs: readonly number[];
  readonly flapping: boolean;
  readonly announced: AlertPayload | null;
  /** The cause alert it is a child of (null when none; absent in checkpoints older than cause rules). */
  readonly causedBy: string | null;
}

/** The persisted alert state (version 1). */
export interface PersistedAlertState {
  readonly version: 1;
  readonly alerts: readonly PersistedAlert[];
}

const finiteOrNull = (value: number): number | null => (Number.isFinite(value) ? value : null);

/** Snapshot the pending and firing alerts (inactive ones carry nothing worth keeping across a restart). */
export function exportEngine(engine: EngineState): PersistedAlertState {
  const alerts: PersistedAlert[] = [];
  for (const record of engine.alerts.values()) {
    if (record.status === "inactive") continue;
    alerts.push({
      fingerprint: record.fingerprint,
      ruleId: record.ruleId,
      rule: record.ruleKind,
      labels: { ...record.labels },
      targetIds: [...record.targetIds],
      scopeKey: record.scopeKey,
      status: record.status,
      rawActive: record.rawActive,
      pendingSinceMs: finiteOrNull(record.pendingSinceMs),
      startsAtMs: finiteOrNull(record.startsAtMs),
      lastAnnouncedMs: finiteOrNull(record.lastAnnouncedMs),
      flipTimesMs: [...record.flipTimesMs],
      flapping: record.flapping,
      // Round-trip through JSON so prices in contexts become plain strings.
      announced:
        record.announced === null ? null : (JSON.parse(JSON.stringify(record.announced)) as AlertPayload),
      causedBy: record.causedBy,
    });
  }
  return { version: 1, alerts };
}

/** Rebuild an engine from persisted state (validated at the edge: src/state/alert-checkpoint.ts). */
export function importEngine(persisted: PersistedAlertState): EngineState {
  const engine = createEngineState();
  mergeEngine(engine, persisted);
  return engine;
}

/** Add persisted alerts to an engine, each replacing the engine's own record of its fingerprint (a handed-over target). */
export function mergeEngine(engine: EngineState, persisted: PersistedAlertState): void {
  for (const alert of persisted.alerts) {
    dropEngineRecord(engine, alert.fingerprint);
    const record = toRecord(alert);
    putRecord(engine, record);
    // Inhibition counts a firing inhibitor (upstream_error) only while its condition holds (not while held by flap damping).
    if (countsAsInhibitor(record)) countInhibitor(engine, record, +1);
  }
}

/** Drop a record without a transition (its alert is now someone else's, or resolved elsewhere), inhibition included. */
export function dropEngineRecord(engine: EngineState, fingerprint: string): void {
  const existing = engine.alerts.get(fingerprint);
  if (existing === undefined) return;
  if (countsAsInhibitor(existing)) countInhibitor(engine, existing, -1);
  dropRecord(engine, fingerprint);
}

function countsAsInhibitor(record: AlertRecord): boolean {
  return record.status === "firing" && inhibitsOthers(record.ruleKind) && record.rawActive;
}

/** Replay alert transitions journaled after the checkpoint: firing ones become (or refresh) firing records, resolved ones drop theirs. */
export function restoreEngine(engine: EngineState, alerts: readonly AlertPayload[]): void {
  for (const alert of alerts) {
    // alerts the daemon raises itself (sink_error, watchdog, monitor_stalled) belong to their raisers, not to the rules
    if (!isRuleConfigKind(alert.rule)) continue;
    const existing = engine.alerts.get(alert.fingerprint);
    if (alert.status === "resolved") {
      dropEngineRecord(engine, alert.fingerprint);
      continue;
    }
    const startsAtMs = Date.parse(alert.startsAt);
    if (existing !== undefined && existing.status === "firing") {
      existing.announced = alert;
      existing.causedBy = alert.causedBy ?? null;
      existing.lastAnnouncedMs = Math.max(existing.lastAnnouncedMs, startsAtMs);
      continue;
    }
    if (existing?.status === "pending") dropRecord(engine, alert.fingerprint);
    const { scopeKey, targetIds } = restoredKeyOf(alert.rule, alert.labels);
    const record: AlertRecord = {
      fingerprint: alert.fingerprint,
      ruleId: alert.labels["rule_id"] ?? alert.rule,
      ruleKind: alert.rule,
      labels: alert.labels,
      // What the labels tell (an upstream_error's endpoint, a publisher); the rest comes with the next measurement.
      targetIds,
      scopeKey,
      status: "firing",
      rawActive: true,
      pendingSinceMs: startsAtMs,
      startsAtMs,
      lastAnnouncedMs: startsAtMs,
      flipTimesMs: [],
      flapping: alert.context["flapping"] === true,
      finding: null,
      announced: alert,
      checkedRule: null,
      causedBy: alert.causedBy ?? null,
    };
    putRecord(engine, record);
    if (inhibitsOthers(record.ruleKind)) countInhibitor(engine, record, +1);
  }
}

/** The engine's record of a persisted alert: absent times become NaN, nothing is evaluated yet. */
function toRecord(alert: PersistedAlert): AlertRecord {
  return {
    fingerprint: alert.fingerprint,
    ruleId: alert.ruleId,
    ruleKind: alert.rule,
    labels: alert.labels,
    targetIds: alert.targetIds,
    scopeKey: alert.scopeKey,
    status: alert.status,
    rawActive: alert.rawActive,
    pendingSinceMs: alert.pendingSinceMs ?? Number.NaN,
    startsAtMs: alert.startsAtMs ?? Number.NaN,
    lastAnnouncedMs: alert.lastAnnouncedMs ?? Number.NaN,
    flipTimesMs: [...alert.flipTimesMs],
    flapping: alert.flapping,
    finding: null,
    announced: alert.announced,
    checkedRule: null,
    causedBy: alert.causedBy,
  };
}
