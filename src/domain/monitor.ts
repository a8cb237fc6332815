// The monitor's public API: fold observations and clock ticks into alert transitions (pure, deterministic).
// observe/tick/retainTargets take ownership of the state, mutate it in place for speed and return it.
import {
  advance,
  applyMeasure,
  cellFor,
  createEngineState,
  dropRecord,
  ignoresCalmMeasure,
  isDisposable,
  scopeHasRecords,
  resolve,
  type AlertRecord,
  type EngineState,
} from "./alert-engine.js";
import { exportEngine, importEngine, restoreEngine, type PersistedAlertState } from "./alert-persistence.js";
import { isTimeDriven, runDetector } from "./detectors/index.js";
import type { Measure, QuietKeys } from "./detectors/finding.js";
import type { AlertLabels, AlertPayload } from "./events.js";
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
  settingsFor,
  targetLabels,
  targetScopeKey,
  upstreamLabels,
  upstreamOverrideKey,
  type RuleSettings,
} from "./rule-scope.js";
import type { RuleConfig } from "./rules/index.js";
import type { TargetSpec } from "./types.js";
import {
  applyPoll,
  MAX_KEYS_PER_RULE,
  type KeyEntry,
  type RuleSlot,
  type TargetData,
  type TargetPlan,
} from "./target-state.js";

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
  if (observation.kind === "history") {
    data.history?.insertAll(observation.points);
    return { state, transitions: NO_TRANSITIONS };
  }
  // Transitions collect in a reused scratch array (evaluation is synchronous, never re-entered).
  const out = scratch;
  if (out.length !== 0) out.length = 0; // nothing left over should a previous call have thrown
  applyPoll(data, observation);
  const ok = observation.result.ok;
  const slots = targetPlanOf(plan, data).slots;
  const scopeQuiet = isScopeQuiet(state, data);
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i]!;
    // A failed poll is no verdict: only the failure count and the clock-driven rules move.
    if (!ok && !slot.runsOnFailure) continue;
    evaluate(state, data, slot, nowMs, out, scopeQuiet);
  }
  if (ok && observation.kind === "offchain") reevaluateOnchainPartners(state, plan, data, nowMs, out);
  return { state, transitions: takeScratch() };
}

const scratch: AlertPayload[] = [];
const NO_TRANSITIONS: readonly AlertPayload[] = Object.freeze([]);

// The transitions collected in the scratch array as a fresh array (none: a shared frozen empty one); scratch emptied.
function takeScratch(): readonly AlertPayload[] {
  if (scratch.length === 0) return NO_TRANSITIONS;
  const taken = scratch.slice();
  scratch.length = 0;
  return taken;
}

/** Time-driven work with no new data: pending→firing after `for`, repeat reminders, staleness growing, hold-down expiry. Called ~every second. */
export function tick(state: MonitorState, rules: readonly RuleConfig[], nowMs: number): Evaluation {
  const plan = planFor(rules);
  const out: AlertPayload[] = [];
  for (const data of state.targets.byId.values()) {
    if (data.snapshot === null) continue;
    const slots = targetPlanOf(plan, data).slots;
    const scopeQuiet = isScopeQuiet(state, data);
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      if (slot.timeDriven) evaluate(state, data, slot, nowMs, out, scopeQuiet);
    }
  }
  sweep(state, plan, nowMs, out);
  return { state, transitions: out };
}

/**
 * Forget per-target data of targets no longer configured; firing alerts of removed targets/rules resolve
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
  for (const id of [...state.targets.byId.keys()]) if (!targetIds.has(id)) removeTarget(state.targets, id);
  const { engine } = state;
  for (const record of engine.alerts.values()) {
    const kept =
      record.targetIds.length === 0
        ? specs === undefined || specs.some((spec) => couldOwn(spec, record.labels))
        : record.targetIds.every((id) => targetIds.has(id));
    if (kept) continue;
    resolve(engine, record, nowMs, out, "target_removed");
    dropRecord(engine, record.fingerprint);
  }
  sweep(state, planFor(rules), nowMs, out);
  return { state, transitions: out };
}

// Whether a target's alerts carry these labels: its target, upstream or cross-market labels are all among them.
function couldOwn(spec: TargetSpec, labels: AlertLabels): boolean {
  const within = (base: AlertLabels): boolean => Object.entries(base).every(([k, v]) => labels[k] === v);
  return (
    within(targetLabels(spec)) ||
    within(upstreamLabels(spec)) ||
    (spec.kind === "onchain" && within({ pair: spec.pair, network: spec.network }))
  );
}

/** Persistable alert state (JSON-safe, no bigint): firing/pending alerts with their timing, so a restart neither re-announces firing alerts nor loses resolves. */
export function exportAlertState(state: MonitorState): PersistedAlertState {
  return exportEngine(state.engine);
}

/** A monitor restored from exported alert state (validated by the state layer). Target data refills from polls. */
export function importAlertState(persisted: PersistedAlertState): MonitorState {
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

// A key is quiet when a measure that does not fire would leave applyMeasure with nothing to do (no alert
// record, or a resolved one kept for flap damping: ignoresCalmMeasure), and detectors may skip computing
// it. Usually the whole scope (the target's pair, vault or network) has no record at all, known from one
// count per observation (scopeQuiet); otherwise the key's cached identity says. An uncached key in a
// scope with records is not quiet (the full path caches it). One probe is reused: evaluation is
// synchronous and never re-entered. The probe also hands the detector the slot's precomputed scope key
// and settings.
class QuietProbe implements QuietKeys {
  engine: EngineState | null = null;
  slot: RuleSlot | null = null;
  scopeKey = "";
  settings: RuleSettings = { threshold: 0, clearThreshold: 0, severity: "warning", direction: "above" };
  /** No record has the slot's scope key (nor an unknown one). */
  scopeQuiet = false;

  isQuiet(subKey: string): boolean {
    const { engine, slot } = this;
    if (engine === null || slot === null) return false;
    if (this.scopeQuiet) return true;
    const cached = subKey === "" ? slot.main : slot.keys.get(subKey);
    // same acceptance as keyFor for keys without a related target (the only ones that ask)
    if (cached === null || cached === undefined) return false;
    if (cached.cell === null || cached.cellEpoch !== engine.cellEpoch) {
      cached.cell = cellFor(engine, cached.fingerprint);
      cached.cellEpoch = engine.cellEpoch;
    }
    return ignoresCalmMeasure(cached.cell.record);
  }
}
const probe = new QuietProbe();

/** The rule slots of a target under `plan`, rebuilt when the rules array or the target's spec object changed. */
function targetPlanOf(plan: RulePlan, data: TargetData): TargetPlan {
  const current = data.plan;
  if (current !== null && current.rulePlan === plan && current.spec === data.spec) return current;
  const spec = data.spec;
  const slots: RuleSlot[] = [];
  const targetScope = targetScopeKey(spec);
  for (const rule of rulesForTarget(plan, spec)) {
    const scopeKey = rule.kind === "upstream_error" ? upstreamOverrideKey(rule, spec) : targetScope;
    const timeDriven = isTimeDriven(rule);
    slots.push({
      rule,
      timeDriven,
      runsOnFailure: timeDriven || rule.kind === "upstream_error",
      scopeKey,
      inTargetScope: scopeKey === targetScope,
      settings: settingsFor(rule, scopeKey),
      main: null,
      keys: new Map(),
    });
  }
  const built: TargetPlan = { rulePlan: plan, spec, slots };
  data.plan = built;
  return built;
}

/**
 * No alert record belongs to the target's scope. Taken once per observation: records created while
 * its rules run are for those rules' own keys, which have been probed by then. It speaks for every
 * slot whose scope key is the target's (all but an upstream_error overridden for this target id).
 */
function isScopeQuiet(state: MonitorState, data: TargetData): boolean {
  return !scopeHasRecords(state.engine, targetScopeKey(data.spec));
}

/** Run one rule on a target and feed its measures to the alert engine; `scopeQuiet` from isScopeQuiet. */
function evaluate(
  state: MonitorState,
  data: TargetData,
  slot: RuleSlot,
  nowMs: number,
  out: AlertPayload[],
  scopeQuiet: boolean,
): void {
  const rule = slot.rule;
  const spot =
    rule.kind === "onchain_offchain_deviation" && data.spec.kind === "onchain"
      ? offchainSpotFor(state.targets, data.spec.pair)
      : undefined;
  probe.engine = state.engine;
  probe.slot = slot;
  probe.scopeKey = slot.scopeKey;
  probe.settings = slot.settings;
  probe.scopeQuiet = scopeQuiet && slot.inTargetScope;
  const findings = runDetector(rule, data, spot, nowMs, probe);
  probe.engine = null;
  probe.slot = null;
  probe.scopeQuiet = false;
  for (let i = 0; i < findings.length; i++) {
    const finding = findings[i]!;
    if (finding.kind === "no_data") continue;
    applyMeasure(state.engine, keyFor(data, slot, finding), finding, rule, nowMs, out);
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
    const slots = targetPlanOf(plan, onchain).slots;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      if (slot.rule.kind === "onchain_offchain_deviation") evaluate(state, onchain, slot, nowMs, out, false);
    }
  }
}

// Labels and fingerprint of a finding's alert, cached per target slot (rule config) and subkey.
function keyFor(data: TargetData, slot: RuleSlot, finding: Measure): KeyEntry {
  const rule = slot.rule;
  const subKey = finding.subKey;
  const cached = subKey === "" ? slot.main : slot.keys.get(subKey);
  const related = finding.relatedTargetId;
  if (cached !== null && cached !== undefined && (related === null || cached.targetIds[1] === related))
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
    cell: null,
    cellEpoch: -1,
  };
  if (subKey === "") slot.main = entry;
  else {
    if (slot.keys.size >= MAX_KEYS_PER_RULE) slot.keys.clear();
    slot.keys.set(subKey, entry);
  }
  return entry;
}

// Resolve alerts whose rule is gone, step every alert in time, drop records that carry nothing.
function sweep(state: MonitorState, plan: RulePlan, nowMs: number, out: AlertPayload[]): void {
  const { engine } = state;
  for (const record of engine.alerts.values()) {
    const rule = plan.byId.get(record.ruleId);
    if (rule === undefined || !stillConfigured(state, record, rule)) {
      resolve(engine, record, nowMs, out, "rule_removed");
      dropRecord(engine, record.fingerprint);
      continue;
    }
    advance(engine, record, rule, nowMs, out);
    if (isDisposable(record, rule, nowMs)) dropRecord(engine, record.fingerprint);
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
