// Which alerts move with a cluster target: the persisted alert state split by ownership key (pure).
import {
  exportEngine,
  importEngine,
  restoreEngine,
  type PersistedAlert,
  type PersistedAlertState,
} from "./alert-persistence.js";
import type { AlertPayload } from "./events.js";
import { isCauseKind } from "./rules/index.js";

/**
 * The reserved ownership key of the cause rules (`upstream_down`, ...): its owner alone evaluates them and
 * publishes their alerts, and their alert state moves with it like any key's. No target id or pair key has this form.
 */
export const CAUSE_OWNERSHIP_KEY = "cause:";

/**
 * The persisted alerts of each ownership key: an alert belongs to a key when every target it was computed from
 * belongs to that key (`keyOfTarget`); a cause alert (no targets) belongs to CAUSE_OWNERSHIP_KEY. Other alerts of
 * no known target (restored from a journal, not seen data yet) or of targets under several keys belong to none:
 * they stay with the process.
 */
export function alertStateByKey(
  state: PersistedAlertState,
  keyOfTarget: (targetId: string) => string | undefined,
): ReadonlyMap<string, PersistedAlertState> {
  const byKey = new Map<string, PersistedAlert[]>();
  for (const alert of state.alerts) {
    const key = keyOfAlert(alert, keyOfTarget);
    if (key === undefined) continue;
    const alerts = byKey.get(key) ?? [];
    alerts.push(alert);
    byKey.set(key, alerts);
  }
  return new Map([...byKey].map(([key, alerts]) => [key, { version: 1, alerts }]));
}

/** No alerts: what a key with nothing pending or firing checkpoints. */
export const NO_ALERTS: PersistedAlertState = { version: 1, alerts: [] };

/**
 * A key's checkpoint brought up to what the cluster's log announced after it: `laterAlerts` are the alert
 * transitions journaled after the checkpoint's seq, in seq order (any key's). Those of this key's targets are
 * applied (a firing one becomes or refreshes a firing alert, a resolved one drops it), so a transition its owner
 * published but had not checkpointed when it died is neither announced again nor resolved twice.
 */
export function reconcileWithJournal(
  checkpoint: PersistedAlertState,
  laterAlerts: readonly AlertPayload[],
  key: string,
  keyOfTarget: (targetId: string) => string | undefined,
): PersistedAlertState {
  const mine = new Set(checkpoint.alerts.map((alert) => alert.fingerprint));
  const engine = importEngine(checkpoint);
  restoreEngine(engine, laterAlerts);
  const alerts = exportEngine(engine).alerts.filter(
    (alert) => mine.has(alert.fingerprint) || keyOfAlert(alert, keyOfTarget) === key,
  );
  return { version: 1, alerts };
}

function keyOfAlert(
  alert: PersistedAlert,
  keyOfTarget: (targetId: string) => string | undefined,
): string | undefined {
  if (alert.targetIds.length === 0 && isCauseKind(alert.rule)) return CAUSE_OWNERSHIP_KEY;
  const keys = new Set(alert.targetIds.map(keyOfTarget));
  const [key] = keys;
  return keys.size === 1 ? key : undefined;
}
