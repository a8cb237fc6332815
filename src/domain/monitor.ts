// The monitor's public API: fold observations and clock ticks into alert transitions (pure, deterministic).
// observe/tick/retainTargets take ownership of the state, mutate it in place for speed and return it.
import {
  advance,
  applyMeasure,
  createEngineState,
  isDisposable,
  resolve,
  type AlertRecord,
  type EngineState,
} from "./alert-engine.js";
import { exportEngine, importEngine, restoreEngine, type PersistedAlertState } from "./alert-persistence.js";
import { isTimeDriven, runDetector } from "./detectors/index.js";
import type { Measure, QuietKeys } from "./detectors/finding.js";
import type { AlertPayload } from "./events.js";
import { fingerprintOf } from "./fingerprint.js";
import {
  createTargetRegistry,
  ensureTarget,
  offchainSpotFor,
  removeTarget,
  type TargetRegistry,
} from "./monitor-targets.js";
import type { Observation } from "./observation.js";
import { planFor, retentionFor, rulesForTarget, type RulePlan } from "./rule-plan.js";
import {
  coversTarget,
  filtersPublishers,
  inScope,
  ruleLabels,
  targetLabels,
  upstreamLabels,
} from "./rule-scope.js";
import type { RuleConfig } from "./rules.js";
import { applyPoll, MAX_KEYS_PER_RULE, type KeyEntry, type TargetData } from "./target-state.js";

export type { Observation } from "./observation.js";
export type { PersistedAlert, PersistedAlertState } from "./alert-persistence.js";

/** Everything the monitor remembers; opaque to callers (only this module's functions read it). */
export interface MonitorState {
  readonly targets: TargetRegistry;
  readonly engine: EngineState;
}

/** The (same, mutated) state and the alert transitions an input caused, in order. */
export interface Evaluation {
  readonly state: MonitorState;
  readonly transitions: readonly AlertPayload[];
}

/** A monitor with no targets and no alerts. */
export function createMonitorState(): MonitorState {
  return { targets: createTargetRegistry(), engine: createEngineState() };
}

/** Fold one observation in: update the target, run the detectors that apply, step the alerts they touch. */
export function observe(
  state: MonitorState,
  observation: Observation,
  rules: readonly RuleConfig[],
  nowMs: number,
): Evaluation {
  const plan = planFor(rules);
  const data = ensureTarget(state.targets, observation.target, retentionFor(plan, observation.target));
  const out: AlertPayload[] = [];
  if (observation.kind === "history") {
    data.history?.insertAll(observation.points);
    return { state, transitions: out };
  }
  applyPoll(data, observation);
  const ok = observation.result.ok;
  for (const rule of rulesForTarget(plan, observation.target)) {
    // A failed poll is no verdict: only the failure count and the clock-driven rules move.
    if (!ok && rule.kind !== "upstream_error" && !isTimeDriven(rule)) continue;
    evaluate(state, data, rule, nowMs, out);
  }
  if (ok && observation.kind === "offchain") reevaluateOnchainPartners(state, plan, data, nowMs, out);
  return { state, transitions: out };
}

/** Time-driven work with no new data: pending→firing after `for`, repeat reminders, staleness growing, hold-down expiry. Called ~every second. */
export function tick(state: MonitorState, rules: readonly RuleConfig[], nowMs: number): Evaluation {
  const plan = planFor(rules);
  const out: AlertPayload[] = [];
  for (const data of state.targets.byId.values()) {
    if (data.snapshot === null) continue;
    for (const rule of rulesForTarget(plan, data.spec))
      if (isTimeDriven(rule)) evaluate(state, data, rule, nowMs, out);
  }
  sweep(state, plan, nowMs, out);
  return { state, transitions: out };
}

/** Forget per-target data of targets no longer configured; firing alerts of removed targets/rules resolve. */
export function retainTargets(
  state: MonitorState,
  targetIds: ReadonlySet<string>,
  rules: readonly RuleConfig[],
  nowMs: number,
): Evaluation {
  const out: AlertPayload[] = [];
  for (const id of [...state.targets.byId.keys()]) if (!targetIds.has(id)) removeTarget(state.targets, id);
  const { engine } = state;
  for (const record of engine.alerts.values()) {
    if (record.targetIds.every((id) => targetIds.has(id))) continue;
    resolve(engine, record, nowMs, out, "target_removed");
    engine.alerts.delete(record.fingerprint);
  }
  sweep(state, planFor(rules), nowMs, out);
  return { state, transitions: out };
}

/** Persistable alert state (JSON-safe, no bigint): firing/pending alerts with their timing, so a restart neither re-announces firing alerts nor loses resolves. */
export function exportAlertState(state: MonitorState): PersistedAlertState {
  return exportEngine(state.engine);
}

/** A monitor restored from exported alert state; throws PmError PM_ERR_STATE on garbage. Target data refills from polls. */
export function importAlertState(persisted: unknown): MonitorState {
  return { targets: createTargetRegistry(), engine: importEngine(persisted) };
}

/** Apply alert transitions journaled after the last checkpoint (in seq order) so a restart matches what was announced. */
export function restoreAnnounced(state: MonitorState, alerts: readonly AlertPayload[]): MonitorState {
  restoreEngine(state.engine, alerts);
  return state;
}

/** Alerts currently firing, as last announced. */
export function activeAlerts(state: MonitorState): readonly AlertPayload[] {
  const active: AlertPayload[] = [];
  for (const record of state.engine.alerts.values())
    if (record.status === "firing" && record.announced !== null) active.push(record.announced);
  return active;
}

// A key is quiet when its cached identity says it has no alert record: then a measure that does not fire
// would leave applyMeasure with nothing to do, and detectors may skip computing it. An uncached key is not
// quiet (the full path caches it). One probe is reused: evaluation is synchronous and never re-entered.
class QuietProbe implements QuietKeys {
  engine: EngineState | null = null;
  data: TargetData | null = null;
  rule: RuleConfig | null = null;

  isQuiet(subKey: string): boolean {
    const { engine, data, rule } = this;
    if (engine === null || data === null || rule === null) return false;
    const cached = data.keys.get(rule.id)?.get(subKey);
    // same acceptance as keyFor for keys without a related target (the only ones that ask)
    if (cached === undefined || cached.rule !== rule) return false;
    return !engine.alerts.has(cached.fingerprint);
  }
}
const probe = new QuietProbe();

function evaluate(
  state: MonitorState,
  data: TargetData,
  rule: RuleConfig,
  nowMs: number,
  out: AlertPayload[],
): void {
  const spot =
    rule.kind === "onchain_offchain_deviation" && data.spec.kind === "onchain"
      ? offchainSpotFor(state.targets, data.spec.pair)
      : undefined;
  probe.engine = state.engine;
  probe.data = data;
  probe.rule = rule;
  const findings = runDetector(rule, data, spot, nowMs, probe);
  probe.engine = probe.data = probe.rule = null;
  for (const finding of findings) {
    if (finding.kind === "no_data") continue;
    applyMeasure(state.engine, keyFor(data, rule, finding), finding, rule, nowMs, out);
  }
}

// An off-chain spot price moves the cross-market deviation of every on-chain target of the pair.
function reevaluateOnchainPartners(
  state: MonitorState,
  plan: RulePlan,
  offchain: TargetData,
  nowMs: number,
  out: AlertPayload[],
): void {
  if (offchain.spec.kind !== "offchain") return;
  if (state.targets.offchainSpotByPair.get(offchain.spec.pair) !== offchain.spec.id) return;
  const ids = state.targets.onchainByPair.get(offchain.spec.pair);
  if (ids === undefined) return;
  for (const id of ids) {
    const onchain = state.targets.byId.get(id);
    if (onchain === undefined) continue;
    for (const rule of rulesForTarget(plan, onchain.spec))
      if (rule.kind === "onchain_offchain_deviation") evaluate(state, onchain, rule, nowMs, out);
  }
}

// Labels and fingerprint of a finding's alert, cached per target, rule config and subkey.
function keyFor(data: TargetData, rule: RuleConfig, finding: Measure): KeyEntry {
  let perRule = data.keys.get(rule.id);
  if (perRule === undefined) {
    perRule = new Map();
    data.keys.set(rule.id, perRule);
  }
  const cached = perRule.get(finding.subKey);
  const related = finding.relatedTargetId;
  if (cached !== undefined && cached.rule === rule && (related === null || cached.targetIds[1] === related))
    return cached;
  const spec = data.spec;
  const base =
    rule.kind === "upstream_error"
      ? upstreamLabels(spec)
      : rule.kind === "onchain_offchain_deviation" && spec.kind === "onchain"
        ? { pair: spec.pair, network: spec.network }
        : targetLabels(spec);
  const labels = { ...base, ...finding.extraLabels, ...ruleLabels(rule) };
  const entry: KeyEntry = {
    rule,
    labels,
    fingerprint: fingerprintOf(rule.kind, labels),
    targetIds: related === null ? [spec.id] : [spec.id, related],
  };
  if (perRule.size >= MAX_KEYS_PER_RULE) perRule.clear();
  perRule.set(finding.subKey, entry);
  return entry;
}

// Resolve alerts whose rule is gone, step every alert in time, drop records that carry nothing.
function sweep(state: MonitorState, plan: RulePlan, nowMs: number, out: AlertPayload[]): void {
  const { engine } = state;
  for (const record of engine.alerts.values()) {
    const rule = plan.byId.get(record.ruleId);
    if (rule === undefined || !stillConfigured(state, record, rule)) {
      resolve(engine, record, nowMs, out, "rule_removed");
      engine.alerts.delete(record.fingerprint);
      continue;
    }
    advance(engine, record, rule, nowMs, out);
    if (isDisposable(record, rule, nowMs)) engine.alerts.delete(record.fingerprint);
  }
}

// Whether the rule still produces this alert: enabled, same kind and window, target and key still in scope.
function stillConfigured(state: MonitorState, record: AlertRecord, rule: RuleConfig): boolean {
  if (!rule.enabled || rule.kind !== record.ruleKind) return false;
  if (record.checkedRule === rule) return true;
  if (record.labels["window"] !== ruleLabels(rule)["window"]) return false;
  if (rule.kind === "publisher_missing" && !rule.publishers.includes(record.scopeKey)) return false;
  if (filtersPublishers(rule) && !inScope(rule, record.scopeKey)) return false;
  const owner = state.targets.byId.get(record.targetIds[0] ?? "");
  // A target not polled since a restart cannot be checked yet; retainTargets handles removed ones.
  if (owner === undefined) return true;
  if (!coversTarget(rule, owner.spec)) return false;
  record.checkedRule = rule;
  return true;
}
