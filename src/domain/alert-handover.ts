// Which alerts move with a cluster target: the persisted alert state split by ownership key (pure).
import {
  exportEngine,
  importEngine,
  restoreEngine,
  type PersistedAlert,
  type PersistedAlertState,
} from "./alert-persistence.js";
import type { AlertLabels, AlertPayload, RuleKind } from "./events.js";
import { isCauseKind, isRuleConfigKind, RULES, type RuleConfigKind } from "./rules/index.js";
import type { TargetSpec } from "./types.js";

/** The ownership key an alert of no known target belongs to, read from its rule and labels; undefined: none (or several). */
export type KeyOfLabels = (rule: RuleKind, labels: AlertLabels) => string | undefined;

/** No alert of unknown targets has a key (a caller that knows no targets' labels). */
const NO_LABEL_KEYS: KeyOfLabels = () => undefined;

/**
 * The reserved ownership key of the cause rules (`upstream_down`, ...): its owner alone evaluates them and
 * publishes their alerts, and their alert state moves with it like any key's. No target id or pair key has this form.
 */
export const CAUSE_OWNERSHIP_KEY = "cause:";

/**
 * The persisted alerts of each ownership key: an alert belongs to a key when every target it was computed from
 * belongs to that key (`keyOfTarget`); a cause alert (no targets) belongs to CAUSE_OWNERSHIP_KEY. Other alerts of
 * no known target (restored from a journal, not seen data yet) belong to the key `keyOfLabels` reads from their
 * labels; those it finds none for, and alerts of targets under several keys, belong to none:
 * they stay with the process.
 */
export function alertStateByKey(
  state: PersistedAlertState,
  keyOfTarget: (targetId: string) => string | undefined,
  keyOfLabels: KeyOfLabels = NO_LABEL_KEYS,
): ReadonlyMap<string, PersistedAlertState> {
  const byKey = new Map<string, PersistedAlert[]>();
  for (const alert of state.alerts) {
    const key = keyOfAlert(alert, keyOfTarget, keyOfLabels);
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
  keyOfLabels: KeyOfLabels = NO_LABEL_KEYS,
): PersistedAlertState {
  const mine = new Set(checkpoint.alerts.map((alert) => alert.fingerprint));
  const engine = importEngine(checkpoint);
  restoreEngine(engine, laterAlerts);
  const alerts = exportEngine(engine).alerts.filter(
    (alert) => mine.has(alert.fingerprint) || keyOfAlert(alert, keyOfTarget, keyOfLabels) === key,
  );
  return { version: 1, alerts };
}

/**
 * Ownership keys by labels, for alerts restored from the log (their record knows no target ids until their next
 * measurement): the key of the targets whose labels under the alert's rule (its `targetLabels`: pair, market,
 * network, ...) the alert's labels all carry, when those targets agree on one key. Indexed once per targets set
 * (each rule's on its first lookup): a lookup costs the few label shapes of the rule's targets, not the targets.
 */
export function keyOfLabelsFor(
  targets: readonly { readonly spec: TargetSpec; readonly key: string }[],
): KeyOfLabels {
  // a copy: the index is built lazily, so a caller changing its array afterwards must not change the answers
  const fixed = [...targets];
  const indexes = new Map<RuleConfigKind, readonly LabelShape[]>();
  return (rule, labels) => {
    if (!isRuleConfigKind(rule)) return undefined;
    let shapes = indexes.get(rule);
    if (shapes === undefined) {
      shapes = labelShapes(fixed, RULES[rule].targetLabels);
      indexes.set(rule, shapes);
    }
    let found: string | undefined;
    for (const { names, keyOfValues } of shapes) {
      const key = keyOfValues.get(valuesText(names.map((name) => labels[name])));
      if (key === undefined) continue;
      if (key === null || (found !== undefined && found !== key)) return undefined;
      found = key;
    }
    return found;
  };
}

/** Targets whose labels under a rule have the same names: the key of each set of values (null: targets disagree). */
interface LabelShape {
  readonly names: readonly string[];
  readonly keyOfValues: ReadonlyMap<string, string | null>;
}

/** The targets grouped by the names of their labels under a rule, each group keyed by its label values. */
function labelShapes(
  targets: readonly { readonly spec: TargetSpec; readonly key: string }[],
  targetLabels: (spec: TargetSpec) => AlertLabels,
): LabelShape[] {
  const shapes = new Map<string, { names: readonly string[]; keyOfValues: Map<string, string | null> }>();
  for (const { spec, key } of targets) {
    const labels = Object.entries(targetLabels(spec));
    const names = labels.map(([name]) => name);
    const namesText = JSON.stringify(names);
    let shape = shapes.get(namesText);
    if (shape === undefined) {
      shape = { names, keyOfValues: new Map() };
      shapes.set(namesText, shape);
    }
    const values = valuesText(labels.map(([, value]) => value));
    const held = shape.keyOfValues.get(values);
    shape.keyOfValues.set(values, held === undefined || held === key ? key : null);
  }
  return [...shapes.values()];
}

/** Label values as one map key (a label an alert lacks, undefined, is told from every text value). */
function valuesText(values: readonly (string | undefined)[]): string {
  return JSON.stringify(values);
}

/** The one ownership key of the targets `alert` was computed from (its labels' when it names none), else undefined. */
function keyOfAlert(
  alert: PersistedAlert,
  keyOfTarget: (targetId: string) => string | undefined,
  keyOfLabels: KeyOfLabels,
): string | undefined {
  if (alert.targetIds.length === 0)
    return isCauseKind(alert.rule) ? CAUSE_OWNERSHIP_KEY : keyOfLabels(alert.rule, alert.labels);
  const keys = new Set(alert.targetIds.map(keyOfTarget));
  const [key] = keys;
  return keys.size === 1 ? key : undefined;
}
