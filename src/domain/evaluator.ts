// The evaluator of one rules array: which rules run on a target (resolved once per target spec), when a
// detector may be skipped, the alert keys of the measures, and the sweep of alerts whose rule is gone.
import {
  advance,
  applyMeasure,
  dropRecord,
  ignoresCalmMeasure,
  isDisposable,
  resolve,
  type AlertKey,
  type AlertRecord,
  type EngineState,
} from "./alert-engine.js";
import { causeConfigHash } from "./cause-summary.js";
import type { AlertLabels, AlertPayload } from "./events.js";
import type { Measure } from "./finding.js";
import { fingerprintOf } from "./fingerprint.js";
import { offchainSpotFor, type TargetRegistry } from "./monitor-targets.js";
import { sharedSettingsFor, type RuleSettings, type SettingsCache } from "./rule-scope.js";
import {
  definitionOf,
  ruleLabels,
  type DetectContext,
  type RuleConfig,
  type RuleDefinition,
} from "./rules/index.js";
import type { ResolvedRules, TargetData } from "./target-state.js";
import type { TargetSpec } from "./types.js";

/** What the evaluator works on: the targets' data and the alert engine (both owned by the monitor state). */
export interface MonitorData {
  readonly targets: TargetRegistry;
  readonly engine: EngineState;
}

/** Options of an evaluator. */
export interface EvaluatorOptions {
  /** Never skip a detector on its calm shortcut: the reference the differential test holds the fast path to. */
  readonly exact?: boolean;
}

/** Why a target's rules run: a successful poll, a failed one, or a clock tick with no new data. */
export type Trigger = "ok" | "failed" | "tick";

/** The rules of one configuration applied to targets; state derived from the rules array only, rebuilt with a new evaluator. */
export interface Evaluator {
  readonly rules: readonly RuleConfig[];
  /** The enabled cause rules (their input is other alerts), in registry order: see evaluateCauses. */
  readonly causes: readonly RuleConfig[];
  /** The hash of what a cause judgement over members' summaries depends on (causeConfigHash). */
  readonly causeHash: string;
  /** The rules that cover a target and the history it needs, resolved once per target spec. */
  rulesFor(spec: TargetSpec): TargetRules;
  /**
   * The rules this evaluator resolved for the data's spec and the data keeps (`data.resolved`, set by the monitor
   * once the data's history is sized for them), or null: then rulesFor.
   */
  resolvedFor(data: TargetData): TargetRules | null;
  /** Run the target's rules (`rules`: rulesFor its spec) that `trigger` concerns and feed their measures to the alert engine. */
  evaluateTarget(
    monitor: MonitorData,
    data: TargetData,
    rules: TargetRules,
    trigger: Trigger,
    nowMs: number,
    out: AlertPayload[],
  ): void;
  /** A new off-chain spot price: re-run the rules that read it on the pair's on-chain targets. */
  evaluatePartners(monitor: MonitorData, offchain: TargetData, nowMs: number, out: AlertPayload[]): void;
  /** Resolve alerts whose rule is gone, step every alert in time, drop records that carry nothing. */
  sweep(monitor: MonitorData, nowMs: number, out: AlertPayload[]): void;
  /** Drop what was resolved for a target no longer monitored (its slots hold its data between runs). */
  forget(targetId: string): void;
}

/**
 * One enabled rule that covers a target, with what is resolved once per (rule, target spec); it is also the
 * detector's DetectContext: the target's data, the time and the related target are written before each run.
 * Detectors read it during the call and keep none of it (they destructure it), so the slot serves every run;
 * runs never nest (a detector does not call the evaluator). One object per slot, not a slot and a context: a poll
 * touches half as many objects that are rarely still in cache with hundreds of targets.
 */
class RuleSlot implements DetectContext<RuleConfig> {
  /** Written before every run (a slot is resolved before its target's data exists). */
  target!: TargetData;
  nowMs = 0;
  related: TargetData | undefined = undefined;

  constructor(
    readonly rule: RuleConfig,
    readonly definition: RuleDefinition<RuleConfig>,
    readonly scopeKey: string,
    readonly settings: RuleSettings,
    /** The alert labels before a measure's own: the target's part, then the rule's part (window, rule_id). */
    readonly targetLabels: AlertLabels,
    readonly ruleLabels: AlertLabels,
    /**
     * The target's own key (subkey "", no extra labels, no related target), built once: what most measures are keyed
     * by; its fingerprint is what the calm check of a one-key rule looks up.
     */
    readonly mainKey: AlertKey,
  ) {}
}

/** The rule slots of one target spec (rules with `inhibits` first, so a recovery unmutes before the others run). */
export interface TargetRules extends ResolvedRules {
  readonly spec: TargetSpec;
  readonly slots: readonly RuleSlot[];
  /**
   * The slots each trigger runs (runsOn), in the same order: an ok poll all of them, a failed poll the runsOnFailure
   * ones, a tick the timeDriven ones.
   */
  readonly byTrigger: Readonly<Record<Trigger, readonly RuleSlot[]>>;
  /** The slots whose rule reads the pair's off-chain spot (related "offchain_spot"), in the same order: evaluatePartners. */
  readonly partnerSlots: readonly RuleSlot[];
  /** History the target needs: the longest window of the enabled rules that keep one for its kind (0 = none). */
  readonly retainMs: number;
  /** The windows of the slots' rules that read the target's history (vs retainMs: a rule whose pairs filter leaves the target out keeps history, reads none). */
  readonly windowsMs: readonly number[];
}

/** An evaluator for `rules` (the monitor state builds one whenever it is handed another rules array: a config load or reload). */
export function createEvaluator(rules: readonly RuleConfig[], options: EvaluatorOptions = {}): Evaluator {
  const exact = options.exact === true;
  // The first rule of each id wins; the config loader rejects duplicates, this keeps a bad array harmless.
  const byId = new Map<string, RuleConfig>();
  for (const rule of rules) if (!byId.has(rule.id)) byId.set(rule.id, rule);
  const active = [...byId.values()].filter((rule) => rule.enabled);
  const enabled = rules.filter((rule) => rule.enabled);
  const perTarget = new Map<string, TargetRules>();
  // the settings of rules without an override for a target's key: one object per rule, read by every target
  const settingsCache: SettingsCache = new Map();

  const rulesOf = (spec: TargetSpec): TargetRules => {
    const known = perTarget.get(spec.id);
    if (known?.spec === spec) return known;
    const built = resolveTargetRules(perTarget, enabled, buildSlots(active, spec, settingsCache), spec);
    perTarget.set(spec.id, built);
    return built;
  };

  const run = (
    monitor: MonitorData,
    data: TargetData,
    slot: RuleSlot,
    nowMs: number,
    out: AlertPayload[],
  ): void => {
    const { rule, definition } = slot;
    // the slot is the detector's context
    slot.target = data;
    slot.nowMs = nowMs;
    slot.related =
      definition.related === "offchain_spot" && data.spec.kind === "onchain"
        ? offchainSpotFor(monitor.targets, data.spec.pair)
        : undefined;
    if (!exact && definition.calm !== null && definition.calm(slot) && isQuiet(monitor.engine, slot)) return;
    const findings = definition.detect(slot);
    for (const finding of findings)
      if (finding.kind === "measure")
        applyMeasure(monitor.engine, keyOf(data.spec, slot, finding), finding, rule, nowMs, out);
  };

  const causes = active.filter((rule) => definitionOf(rule).cause !== null);
  return {
    rules,
    causes,
    causeHash: causeConfigHash(causes, active),
    rulesFor: rulesOf,
    resolvedFor: (data) => resolvedBy(perTarget, data),
    evaluateTarget(monitor, data, rules, trigger, nowMs, out) {
      // a tick runs a target's clock-driven slots only (one or two of its ~6): the others are not even read
      for (const slot of rules.byTrigger[trigger]) run(monitor, data, slot, nowMs, out);
    },
    evaluatePartners(monitor, offchain, nowMs, out) {
      const spec = offchain.spec;
      if (spec.kind !== "offchain") return;
      // most pairs have no on-chain target: one lookup says so
      const partners = monitor.targets.onchainByPair.get(spec.pair);
      if (partners === undefined || monitor.targets.offchainSpotByPair.get(spec.pair) !== spec.id) return;
      for (const id of partners) {
        const onchain = monitor.targets.byId.get(id);
        if (onchain === undefined) continue;
        for (const slot of (resolvedBy(perTarget, onchain) ?? rulesOf(onchain.spec)).partnerSlots)
          run(monitor, onchain, slot, nowMs, out);
      }
    },
    sweep: (monitor, nowMs, out) => sweepAlerts(byId, monitor, nowMs, out),
    forget(targetId) {
      perTarget.delete(targetId);
    },
  };
}

// Resolve alerts whose rule (the first of its id in `byId`) is gone, step every alert in time, drop records that carry nothing.
function sweepAlerts(
  byId: ReadonlyMap<string, RuleConfig>,
  monitor: MonitorData,
  nowMs: number,
  out: AlertPayload[],
): void {
  const { engine } = monitor;
  for (const record of engine.alerts.values()) {
    const rule = byId.get(record.ruleId);
    if (rule === undefined || !stillConfigured(monitor, record, rule)) {
      resolve(engine, record, nowMs, out, "rule_removed");
      dropRecord(engine, record.fingerprint);
      continue;
    }
    advance(engine, record, rule, nowMs, out);
    if (isDisposable(record, rule, nowMs)) dropRecord(engine, record.fingerprint);
  }
}

// What an evaluator (token `owner`) resolves for a spec: its slots (per trigger, and its partners'), its history.
function resolveTargetRules(
  owner: object,
  enabled: readonly RuleConfig[],
  slots: readonly RuleSlot[],
  spec: TargetSpec,
): TargetRules {
  const retainMs = enabled.reduce((ms, rule) => Math.max(ms, definitionOf(rule).historyMs(rule, spec)), 0);
  const windowsMs = slots.map((s) => s.definition.historyMs(s.rule, spec)).filter((ms) => ms > 0);
  const byTrigger: Record<Trigger, readonly RuleSlot[]> = {
    ok: slots.filter((s) => runsOn(s.definition, "ok")),
    failed: slots.filter((s) => runsOn(s.definition, "failed")),
    tick: slots.filter((s) => runsOn(s.definition, "tick")),
  };
  const partnerSlots = slots.filter((s) => s.definition.related === "offchain_spot");
  return { owner, spec, slots, byTrigger, partnerSlots, retainMs, windowsMs };
}

// The rules the evaluator with token `owner` resolved for the data's current spec (see Evaluator.resolvedFor).
function resolvedBy(owner: object, data: TargetData): TargetRules | null {
  const resolved = data.resolved;
  // only that evaluator's resolutions carry its token: the ResolvedRules is one of its TargetRules
  return resolved !== null && resolved.owner === owner && resolved.spec === data.spec
    ? (resolved as TargetRules)
    : null;
}

// Whether a slot's rule runs for a trigger: failed polls are no verdict (only the failure count and the
// clock-driven rules move); ticks run the clock-driven rules.
function runsOn(definition: RuleDefinition<RuleConfig>, trigger: Trigger): boolean {
  if (trigger === "ok") return true;
  return trigger === "failed" ? definition.runsOnFailure : definition.timeDriven;
}

// The slots of the enabled rules that cover a target, the inhibiting ones first (settings shared through the
// evaluator's `settingsCache`).
function buildSlots(
  active: readonly RuleConfig[],
  spec: TargetSpec,
  settingsCache: SettingsCache,
): RuleSlot[] {
  const slots: RuleSlot[] = [];
  for (const rule of active) {
    const definition = definitionOf<RuleConfig>(rule);
    if (!definition.appliesTo(rule, spec) || !definition.coversTarget(rule, spec)) continue;
    const scopeKey = definition.scopeKey(rule, spec);
    const targetLabels = definition.targetLabels(spec);
    const labels = ruleLabels(rule);
    const settings = sharedSettingsFor(settingsCache, rule, scopeKey, definition.direction(rule));
    // labels and targets shared by every record and payload of the key: frozen, none can change them for the rest
    const mainLabels = Object.freeze({ ...targetLabels, ...labels });
    const fingerprint = fingerprintOf(rule.kind, mainLabels);
    const mainKey = { labels: mainLabels, fingerprint, targetIds: Object.freeze([spec.id]) };
    slots.push(new RuleSlot(rule, definition, scopeKey, settings, targetLabels, labels, mainKey));
  }
  return [...slots.filter((s) => s.definition.inhibits), ...slots.filter((s) => !s.definition.inhibits)];
}

/**
 * No alert record of the slot could be moved by a measure that does not fire (see ignoresCalmMeasure),
 * so a detector its calm shortcut clears may be skipped: the rule has no record at all (one lookup, the
 * steady state), or it keys alerts by the target alone and that key's record ignores calm measures. A rule
 * with a key per component and a record somewhere is never quiet: its detector runs.
 */
function isQuiet(engine: EngineState, slot: RuleSlot): boolean {
  if (!engine.recordsByRule.has(slot.rule.id)) return true;
  if (slot.definition.keys === "many") return false;
  return ignoresCalmMeasure(engine.alerts.get(slot.mainKey.fingerprint) ?? null);
}

// The alert key of a measure: target, measure and rule labels, fingerprint, and the targets it depends on.
function keyOf(spec: TargetSpec, slot: RuleSlot, finding: Measure): AlertKey {
  const related = finding.relatedTargetId;
  const plain = finding.subKey === "" && finding.extraLabels === null;
  // the slot's spec is `spec` (slots are resolved per spec): its main key holds the same labels and targets
  if (plain && related === null) return slot.mainKey;
  const targetIds = related === null ? [spec.id] : [spec.id, related];
  // plain: no extra labels, so the labels are the main key's ({...targetLabels, ...ruleLabels}), shared frozen
  if (plain) return { labels: slot.mainKey.labels, fingerprint: slot.mainKey.fingerprint, targetIds };
  const labels = { ...slot.targetLabels, ...finding.extraLabels, ...slot.ruleLabels };
  return { labels, fingerprint: fingerprintOf(slot.rule.kind, labels), targetIds };
}

// Whether the rule still produces this alert: enabled, same kind and window, target and key still in scope.
function stillConfigured(monitor: MonitorData, record: AlertRecord, rule: RuleConfig): boolean {
  if (!rule.enabled || rule.kind !== record.ruleKind) return false;
  if (record.checkedRule === rule) return true;
  const definition = definitionOf<RuleConfig>(rule);
  if (record.labels["window"] !== definition.windowLabel(rule)) return false;
  if (definition.filtersPublishers && !definition.coversKey(rule, record.scopeKey)) return false;
  const owner = monitor.targets.byId.get(record.targetIds[0] ?? "");
  // A target not polled since a restart cannot be checked yet; retainTargets handles removed ones.
  if (owner === undefined) return true;
  if (!definition.appliesTo(rule, owner.spec) || !definition.coversTarget(rule, owner.spec)) return false;
  record.checkedRule = rule;
  return true;
}
