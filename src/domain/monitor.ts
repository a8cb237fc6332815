// The monitor's public API: fold observations and clock ticks into alert transitions (deterministic).
// observe/tick/retainTargets take ownership of the state, mutate it in place for speed and return it.
import { createEngineState, dropRecord, resolve, type EngineState } from "./alert-engine.js";
import {
  dropEngineRecord,
  exportEngine,
  importEngine,
  mergeEngine,
  restoreEngine,
  type PersistedAlertState,
} from "./alert-persistence.js";
import { inhibitorsByTarget, inhibitorsOf, pendingAlertsOf, type PendingAlert } from "./alert-view.js";
import { summarizeCauses, type CauseSummary, type ClusterCauses } from "./cause-summary.js";
import { evaluateCauses } from "./causes.js";
import { createEvaluator, type Evaluator, type TargetRules } from "./evaluator.js";
import type { AlertLabels, AlertPayload } from "./events.js";
import { createTargetRegistry, ensureTarget, removeTarget, type TargetRegistry } from "./monitor-targets.js";
import type { Observation } from "./observation.js";
import type { PriceHistory, PricePoint } from "./price-history.js";
import { applyPoll } from "./target-state.js";
import { describeTargetData, type TargetDataView } from "./target-view.js";
import { isCauseKind, RULES, type RuleConfig } from "./rules/index.js";
import { failureView } from "./rules/upstream-down.js";
import type { TargetSpec } from "./types.js";
import { oldestReferenceMs } from "./window-reference.js";

export type { Observation } from "./observation.js";
export type { PersistedAlert, PersistedAlertState } from "./alert-persistence.js";
export type { PendingAlert } from "./alert-view.js";
export type { TargetDataView } from "./target-view.js";

/** Everything the monitor remembers; opaque to callers (only this module's functions read it). */
export interface MonitorState {
  readonly targets: TargetRegistry;
  readonly engine: EngineState;
  /** The evaluator of the rules array last passed in; a different array (a config reload) builds a new one. */
  evaluator: Evaluator;
  /** Every detector runs (no calm shortcut): the reference the differential test compares with. */
  readonly exact: boolean;
  /** Cluster mode: the peers' part of the cause rules' input and this member's role in them (null: one daemon). */
  cluster: ClusterCauses | null;
  /** A cause parent was pending after the last cause pass: each poll runs the pass, as time alone may fire it. */
  parentPending: boolean;
}

/** Options of a new monitor state. */
export interface MonitorOptions {
  /** Disable every calm shortcut (tests: the exact path the fast one must match). */
  readonly exact?: boolean;
}

/** The (same, mutated) state and the alert transitions an input caused, in order. */
export interface Evaluation {
  readonly state: MonitorState;
  readonly transitions: readonly AlertPayload[];
}

/** A monitor with no targets and no alerts. */
export function createMonitorState(options: MonitorOptions = {}): MonitorState {
  const exact = options.exact === true;
  return {
    targets: createTargetRegistry(),
    engine: createEngineState(),
    evaluator: createEvaluator([], { exact }),
    exact,
    cluster: null,
    parentPending: false,
  };
}

/** Fold one observation in: update the target, run the rules that apply, step the alerts they touch. */
export function observe(
  state: MonitorState,
  observation: Observation,
  rules: readonly RuleConfig[],
  nowMs: number,
): Evaluation {
  const evaluator = evaluatorFor(state, rules);
  const spec = observation.target;
  // the steady state: the target is known under this very spec and this evaluator resolved it (history sized then)
  let data = state.targets.byId.get(spec.id);
  let targetRules = data?.spec === spec ? evaluator.resolvedFor(data) : null;
  if (data === undefined || targetRules === null) {
    targetRules = evaluator.rulesFor(spec);
    data = ensureTarget(state.targets, spec, targetRules.retainMs);
    data.resolved = targetRules;
  }
  if (observation.kind === "history") {
    const history = data.history;
    const { points, source } = observation;
    if (history !== null && source === "handover") {
      const fromMs = oldestReferenceMs(history, nowMs);
      history.insertAll(points.filter((point) => point.atMs >= fromMs));
    } else history?.insertAll(points, source === "candles");
    return { state, transitions: [] };
  }
  const out: AlertPayload[] = [];
  // a member that does not judge the causes (cluster) reads the targets' failures only to group children it links:
  // its own children's transitions run its pass, the rest waits for the tick
  const judges = state.cluster === null || (state.cluster.judges && state.cluster.ready);
  const failureBefore = evaluator.causes.length === 0 || !judges ? null : failureView(data);
  const flipsBefore = state.engine.conditionFlips;
  applyPoll(data, observation);
  const ok = observation.result.ok;
  evaluator.evaluateTarget(state, data, targetRules, ok ? "ok" : "failed", nowMs, out);
  if (ok && observation.kind === "offchain") evaluator.evaluatePartners(state, data, nowMs, out);
  // The causes read the alerts' conditions and the targets' failures (failing or not, with which kind of error): an
  // observation that moved none of them (the steady state, healthy or failing: a failing target's next failures)
  // leaves them as they were; what time alone changes (a poll's age, the first poll), the next tick sees, but for a
  // pending parent's `for`, which each poll steps as before. A child's transition always runs the pass, so it is
  // announced with its parent in the same step.
  if (
    evaluator.causes.length > 0 &&
    (state.parentPending ||
      out.length > 0 ||
      state.engine.conditionFlips !== flipsBefore ||
      (judges && failureView(data) !== failureBefore))
  )
    state.parentPending = evaluateCauses(state, evaluator.causes, nowMs, out, state.cluster);
  return { state, transitions: out };
}

/**
 * The price points of each of `targetIds` any of its windows can still use at `nowMs` or later (a cluster handover
 * carries them on); only targets whose longest window is at least `minRetainMs`.
 */
export function exportHistories(
  state: MonitorState,
  nowMs: number,
  targetIds: Iterable<string>,
  minRetainMs = 0,
): Map<string, readonly PricePoint[]> {
  const histories = new Map<string, readonly PricePoint[]>();
  for (const id of targetIds) {
    const history = retainedHistory(state, id, minRetainMs);
    if (history === null) continue;
    const fromMs = oldestReferenceMs(history, nowMs);
    const points = history.points().filter((point) => point.atMs >= fromMs);
    if (points.length > 0) histories.set(id, points);
  }
  return histories;
}

/**
 * A token of the history of each of `targetIds` whose longest window is at least `minRetainMs`
 * (`PriceHistory.version`), read without copying a point: while it stays the same, no point was added, replaced or
 * evicted.
 */
export function historyVersions(
  state: MonitorState,
  targetIds: Iterable<string>,
  minRetainMs: number,
): Map<string, string> {
  const versions = new Map<string, string>();
  for (const id of targetIds) {
    const history = retainedHistory(state, id, minRetainMs);
    if (history !== null) versions.set(id, history.version);
  }
  return versions;
}

// The target's history when it holds points and its longest window is at least `minRetainMs`, else null.
function retainedHistory(state: MonitorState, targetId: string, minRetainMs: number): PriceHistory | null {
  const history = state.targets.byId.get(targetId)?.history ?? null;
  return history === null || history.size === 0 || history.retainMs < minRetainMs ? null : history;
}

/**
 * Whether the target's history already reaches back `spanMs` before `nowMs`, or its longest window when that is
 * shorter (seeded by a cluster handover, say), and its newest point is at most `maxGapMs` old: older points, such
 * as candles of a warm-up, would add nothing (with an older newest point, candles still fill the time since).
 */
export function historyReachesBack(
  state: MonitorState,
  targetId: string,
  nowMs: number,
  spanMs: number,
  maxGapMs: number,
): boolean {
  const history = state.targets.byId.get(targetId)?.history;
  if (history === null || history === undefined || history.size === 0) return false;
  if (nowMs - history.timeAt(history.size - 1) > maxGapMs) return false;
  return history.indexAtOrBefore(nowMs - Math.min(history.retainMs, spanMs)) >= 0;
}

/** The slots, windows and history retention of `spec` under `rules` (the evaluator's own, built once per rules array). */
export function targetRulesOf(
  state: MonitorState,
  rules: readonly RuleConfig[],
  spec: TargetSpec,
): TargetRules {
  return evaluatorFor(state, rules).rulesFor(spec);
}

/** Time-driven work with no new data: pending→firing after `for`, repeat reminders, staleness growing, hold-down expiry. Called ~every second. */
export function tick(state: MonitorState, rules: readonly RuleConfig[], nowMs: number): Evaluation {
  const evaluator = evaluatorFor(state, rules);
  const out: AlertPayload[] = [];
  for (const data of state.targets.byId.values())
    if (data.snapshot !== null)
      evaluator.evaluateTarget(
        state,
        data,
        evaluator.resolvedFor(data) ?? evaluator.rulesFor(data.spec),
        "tick",
        nowMs,
        out,
      );
  evaluator.sweep(state, nowMs, out);
  state.parentPending = evaluateCauses(state, evaluator.causes, nowMs, out, state.cluster);
  return { state, transitions: out };
}

/**
 * Cluster mode: what the cause passes from now on read besides this engine (the peers' summaries, the cause alerts
 * firing in the cluster's log) and whether this member judges the cause rules or only links its children.
 */
export function setClusterCauses(state: MonitorState, cluster: ClusterCauses): MonitorState {
  state.cluster = cluster;
  return state;
}

/** What this engine's cause rules read of its targets and alerts at `nowMs`, for the other members; null when no cause rule is enabled. */
export function causeSummary(state: MonitorState, nowMs: number): CauseSummary | null {
  const { causes } = state.evaluator;
  return causes.length === 0 ? null : summarizeCauses(state, causes, nowMs);
}

/** The hash of the configuration this engine's cause judgement depends on (causeConfigHash): peers count only under the same. */
export function causeConfigHashOf(state: MonitorState): string {
  return state.evaluator.causeHash;
}

// The evaluator of `rules`: the state's own while the pipeline passes the same array, a new one after a reload.
function evaluatorFor(state: MonitorState, rules: readonly RuleConfig[]): Evaluator {
  if (state.evaluator.rules !== rules) state.evaluator = createEvaluator(rules, { exact: state.exact });
  return state.evaluator;
}

/**
 * Forget per-target data of targets no longer configured (and, with `specs`, register the configured ones not
 * polled yet); firing alerts of removed targets/rules resolve
 * (context.resolvedBy `target_removed` / `rule_removed`). With `specs` (the configured targets), an alert
 * restored from the journal, whose targets are not known yet, resolves too when no configured target
 * could have produced its labels.
 */
export function retainTargets(
  state: MonitorState,
  targetIds: ReadonlySet<string>,
  rules: readonly RuleConfig[],
  nowMs: number,
  specs?: readonly TargetSpec[],
): Evaluation {
  const out: AlertPayload[] = [];
  const evaluator = evaluatorFor(state, rules);
  for (const id of [...state.targets.byId.keys()])
    if (!targetIds.has(id)) {
      removeTarget(state.targets, id);
      evaluator.forget(id);
    }
  // configured targets are known before their first answer: upstream_down judges them (not failing) from the start
  for (const spec of specs ?? [])
    if (targetIds.has(spec.id)) ensureTarget(state.targets, spec, evaluator.rulesFor(spec).retainMs);
  const { engine } = state;
  for (const record of engine.alerts.values()) {
    // a cause alert depends on no target: its rule clears it when its children are gone
    if (isCauseKind(record.ruleKind)) continue;
    const kept =
      record.targetIds.length === 0
        ? specs === undefined || specs.some((spec) => couldOwn(spec, record.labels))
        : record.targetIds.every((id) => targetIds.has(id));
    if (kept) continue;
    resolve(engine, record, nowMs, out, "target_removed");
    dropRecord(engine, record.fingerprint);
  }
  evaluator.sweep(state, nowMs, out);
  state.parentPending = evaluateCauses(state, evaluator.causes, nowMs, out, state.cluster);
  return { state, transitions: out };
}

// Whether a target's alerts could carry these labels: the target's part of some rule kind's labels are all among them.
function couldOwn(spec: TargetSpec, labels: AlertLabels): boolean {
  const within = (base: AlertLabels): boolean => Object.entries(base).every(([k, v]) => labels[k] === v);
  return Object.values(RULES).some((definition) => within(definition.targetLabels(spec)));
}

/** Persistable alert state (JSON-safe, no bigint): firing/pending alerts with their timing, so a restart neither re-announces firing alerts nor loses resolves. */
export function exportAlertState(state: MonitorState): PersistedAlertState {
  return exportEngine(state.engine);
}

/** A monitor restored from exported alert state (validated by the state layer). Target data refills from polls. */
export function importAlertState(persisted: PersistedAlertState, options: MonitorOptions = {}): MonitorState {
  const exact = options.exact === true;
  return {
    targets: createTargetRegistry(),
    engine: importEngine(persisted),
    evaluator: createEvaluator([], { exact }),
    exact,
    cluster: null,
    parentPending: false,
  };
}

/** Apply alert transitions journaled after the last checkpoint (in seq order) so a restart matches what was announced. */
export function restoreAnnounced(state: MonitorState, alerts: readonly AlertPayload[]): MonitorState {
  restoreEngine(state.engine, alerts);
  return state;
}

/**
 * Take over alert state another process kept (a cluster handover): its records replace this monitor's of the same
 * fingerprints, nothing is announced. Returns the adopted alerts that are firing, as they were announced.
 */
export function adoptAlertState(
  state: MonitorState,
  persisted: PersistedAlertState,
): readonly AlertPayload[] {
  mergeEngine(state.engine, persisted);
  return persisted.alerts.flatMap((alert) =>
    alert.status === "firing" && alert.announced !== null ? [alert.announced] : [],
  );
}

/** Let alerts go without a transition (a cluster handover: the new owner carries them on); unknown fingerprints are ignored. */
export function releaseAlertState(state: MonitorState, fingerprints: readonly string[]): MonitorState {
  for (const fingerprint of fingerprints) dropEngineRecord(state.engine, fingerprint);
  return state;
}

/** Alerts currently firing, as last announced. */
export function activeAlerts(state: MonitorState): readonly AlertPayload[] {
  const active: AlertPayload[] = [];
  for (const record of state.engine.alerts.values())
    if (record.status === "firing" && record.announced !== null) active.push(record.announced);
  return active;
}

/** Alerts pending at `nowMs` (condition holds, `for` not elapsed, or held by an inhibitor), in no particular order. */
export function pendingAlerts(state: MonitorState, nowMs: number): readonly PendingAlert[] {
  return pendingAlertsOf(state.engine, state.evaluator.rules, nowMs);
}

/**
 * What inhibits each alert, by fingerprint: the fingerprints of the firing inhibitors (upstream_error) on the
 * targets its data comes from; empty for an alert the engine does not hold (raised by the daemon) or not inhibited.
 */
export function alertInhibitors(state: MonitorState): (fingerprint: string) => readonly string[] {
  const byTarget = inhibitorsByTarget(state.engine);
  return (fingerprint) => {
    const record = state.engine.alerts.get(fingerprint);
    return record === undefined ? [] : inhibitorsOf(record, byTarget);
  };
}

/**
 * What the monitor knows about the data of each target polled at least once (or warmed up with history),
 * history bounded to `maxPoints`; a configured target not heard of yet has no data view.
 */
export function describeTargets(state: MonitorState, maxPoints: number): readonly TargetDataView[] {
  return [...state.targets.byId.values()]
    .filter((data) => !Number.isNaN(data.lastPollAtMs) || (data.history?.size ?? 0) > 0)
    .map((data) => describeTargetData(data, maxPoints));
}
