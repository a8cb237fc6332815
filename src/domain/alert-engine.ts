// The alert lifecycle as a pure reducer: inactive → pending → firing → resolved, with hysteresis, hold-down,
// reminders, flap damping and inhibition. State is mutated in place; transitions are appended to `out`.
import type { AlertLabels, AlertPayload, RuleKind } from "./events.js";
import type { Measure } from "./finding.js";
import { buildPayload, type RemovalCause } from "./alert-payload.js";
import { inhibitsOthers, type RuleConfig } from "./rules/index.js";

/** Lifecycle state of one fingerprint. */
export type RecordStatus = "inactive" | "pending" | "firing";

/** Everything the engine knows about one fingerprint. */
export interface AlertRecord {
  readonly fingerprint: string;
  readonly ruleId: string;
  readonly ruleKind: RuleKind;
  readonly labels: AlertLabels;
  /** Targets whose data the alert depends on (the first one owns it); inhibition looks at all of them. */
  targetIds: readonly string[];
  readonly scopeKey: string;
  status: RecordStatus;
  /** The condition with hysteresis applied, before `for`, hold-down and flap damping. */
  rawActive: boolean;
  pendingSinceMs: number;
  startsAtMs: number;
  lastAnnouncedMs: number;
  /** Times of the latest raw condition flips, newest last, at most flapMaxTransitions + 1. */
  flipTimesMs: number[];
  flapping: boolean;
  /** The latest finding (null after import until fresh data arrives). */
  finding: Measure | null;
  /** The payload last announced while firing (what activeAlerts returns). */
  announced: AlertPayload | null;
  /** The rule config this record was last checked against (null = check again). */
  checkedRule: RuleConfig | null;
  /** Fingerprint of the firing cause alert (upstream_down, ...) this alert is a child of; null when none. */
  causedBy: string | null;
}

/**
 * Alert records by fingerprint, how many inhibiting alerts (upstream_error) fire per target, and how
 * many records each rule id has (so the evaluator knows, with one lookup, that no record of a rule
 * exists and a calm measure of it cannot change anything). Records are added and removed only through
 * putRecord / dropRecord, which keep the counts in step.
 */
export interface EngineState {
  readonly alerts: Map<string, AlertRecord>;
  readonly inhibitingFiring: Map<string, number>;
  /** Records per rule id; no zero entries. */
  readonly recordsByRule: Map<string, number>;
  /** Bumped whenever a record's condition flips: an observation that changed none (and announced nothing) leaves the causes as they were. */
  conditionFlips: number;
}

/** An empty engine. */
export function createEngineState(): EngineState {
  return { alerts: new Map(), inhibitingFiring: new Map(), recordsByRule: new Map(), conditionFlips: 0 };
}

/** Store a record under its fingerprint (replacing any). */
export function putRecord(engine: EngineState, record: AlertRecord): void {
  const previous = engine.alerts.get(record.fingerprint);
  if (previous !== undefined) countRule(engine, previous.ruleId, -1);
  countRule(engine, record.ruleId, 1);
  engine.alerts.set(record.fingerprint, record);
}

/** Remove the record of a fingerprint, if any. */
export function dropRecord(engine: EngineState, fingerprint: string): void {
  const record = engine.alerts.get(fingerprint);
  if (record !== undefined) countRule(engine, record.ruleId, -1);
  engine.alerts.delete(fingerprint);
}

function countRule(engine: EngineState, ruleId: string, delta: number): void {
  const count = (engine.recordsByRule.get(ruleId) ?? 0) + delta;
  if (count > 0) engine.recordsByRule.set(ruleId, count);
  else engine.recordsByRule.delete(ruleId);
}

/**
 * True when a measure that does not fire would change nothing for the key: it has no record, or an
 * inactive one with its condition off (a resolved alert kept for flap damping). applyMeasure would
 * only replace such a record's latest finding, which nothing reads before a firing measure replaces
 * it again (promotion to firing and announcements need one; export skips inactive records).
 */
export function ignoresCalmMeasure(record: AlertRecord | null): boolean {
  return record === null || (record.status === "inactive" && !record.rawActive);
}

/** Identity of an alert key: its fingerprint and labels, and the targets it depends on. */
export interface AlertKey {
  readonly fingerprint: string;
  readonly labels: AlertLabels;
  readonly targetIds: readonly string[];
}

/** True when an inhibiting alert (upstream_error) fires on a target the record depends on (an inhibiting one itself is never muted). */
export function isMuted(engine: EngineState, record: AlertRecord): boolean {
  if (inhibitsOthers(record.ruleKind)) return false;
  for (const id of record.targetIds) if ((engine.inhibitingFiring.get(id) ?? 0) > 0) return true;
  return false;
}

/** Feed one measurement of an alert key into the lifecycle. */
export function applyMeasure(
  engine: EngineState,
  key: AlertKey,
  finding: Measure,
  rule: RuleConfig,
  nowMs: number,
  out: AlertPayload[],
): void {
  let record = engine.alerts.get(key.fingerprint);
  if (record === undefined) {
    // Steady state of a healthy key: no record, nothing allocated.
    if (!finding.fires) return;
    record = createRecord(key, finding, rule);
    if (isMuted(engine, record)) return;
    putRecord(engine, record);
  } else if (isMuted(engine, record)) {
    // Muted alerts neither fire nor resolve; after recovery fresh data re-evaluates them.
    return;
  }
  record.finding = finding;
  // Records restored from the journal learn their targets from the first fresh measurement.
  if (record.targetIds !== key.targetIds) record.targetIds = key.targetIds;
  const wasActive = record.rawActive;
  record.rawActive = wasActive ? !finding.clears : finding.fires;
  if (record.rawActive !== wasActive) {
    engine.conditionFlips++;
    recordFlip(record, rule, nowMs);
    // A firing inhibitor (upstream_error) inhibits only while its condition holds: a held one must not mute fresh data.
    if (record.status === "firing" && inhibitsOthers(record.ruleKind))
      countInhibitor(engine, record, record.rawActive ? +1 : -1);
  }
  advance(engine, record, rule, nowMs, out);
  // A firing alert that was not announced now still shows its current value (activeAlerts, the API,
  // a later checkpoint): no notification, the next reminder or the resolve carries it.
  if (record.status === "firing" && record.lastAnnouncedMs !== nowMs && record.announced !== null)
    record.announced = buildPayload(record, "firing", record.announced.reason, nowMs, null, rule);
}

function createRecord(key: AlertKey, finding: Measure, rule: RuleConfig): AlertRecord {
  return {
    fingerprint: key.fingerprint,
    ruleId: rule.id,
    ruleKind: rule.kind,
    labels: key.labels,
    targetIds: key.targetIds,
    scopeKey: finding.scopeKey,
    status: "inactive",
    rawActive: false,
    pendingSinceMs: Number.NaN,
    startsAtMs: Number.NaN,
    lastAnnouncedMs: Number.NaN,
    flipTimesMs: [],
    flapping: false,
    finding,
    announced: null,
    checkedRule: rule,
    causedBy: null,
  };
}

function recordFlip(record: AlertRecord, rule: RuleConfig, nowMs: number): void {
  record.flipTimesMs.push(nowMs);
  const keep = Math.max(1, rule.flapMaxTransitions + 1);
  if (record.flipTimesMs.length > keep) record.flipTimesMs.splice(0, record.flipTimesMs.length - keep);
}

/** More than flapMaxTransitions raw flips within flapWindowMs (0 in either disables damping). */
export function isFlapping(record: AlertRecord, rule: RuleConfig, nowMs: number): boolean {
  if (rule.flapMaxTransitions <= 0 || rule.flapWindowMs <= 0) return false;
  let recent = 0;
  for (const atMs of record.flipTimesMs) if (atMs > nowMs - rule.flapWindowMs) recent++;
  return recent > rule.flapMaxTransitions;
}

/** Step a record's state machine at `nowMs` (after new data, or from a tick with none). */
export function advance(
  engine: EngineState,
  record: AlertRecord,
  rule: RuleConfig,
  nowMs: number,
  out: AlertPayload[],
): void {
  if (isMuted(engine, record)) return;
  switch (record.status) {
    case "inactive":
      if (!record.rawActive) return;
      record.status = "pending";
      record.pendingSinceMs = nowMs;
      promoteIfDue(engine, record, rule, nowMs, out);
      return;
    case "pending":
      if (!record.rawActive) {
        record.status = "inactive";
        return;
      }
      promoteIfDue(engine, record, rule, nowMs, out);
      return;
    case "firing": {
      const flapping = isFlapping(record, rule, nowMs);
      if (record.rawActive) {
        // Calm again: the flag drops and the next reminder says so.
        record.flapping = flapping;
      } else if (nowMs - record.startsAtMs >= rule.minFiringMs) {
        // Condition cleared and hold-down over: a flapping alert is held until clear for the flap window.
        if (!isHeldByFlapping(record, rule, flapping, nowMs)) {
          resolve(engine, record, nowMs, out, null);
          return;
        }
        record.flapping = true;
      } else if (flapping) record.flapping = true; // cleared in hold-down: flap damping may hold it after
      // Still firing (active, in hold-down, or held): reminders go on, with the current value.
      if (rule.repeatIntervalMs > 0 && nowMs - record.lastAnnouncedMs >= rule.repeatIntervalMs)
        announce(record, "repeat", nowMs, out, rule);
      return;
    }
  }
}

/**
 * The flap-damping rule for a firing alert whose condition has cleared: when it flapped (more than
 * flapMaxTransitions flips within flapWindowMs, now or when last evaluated) it stays firing until
 * the condition has stayed clear for flapWindowMs since its last flip, so a flapping condition ends
 * with one resolve instead of another fire/resolve pair.
 */
export function isHeldByFlapping(
  record: AlertRecord,
  rule: RuleConfig,
  flappingNow: boolean,
  nowMs: number,
): boolean {
  if (rule.flapMaxTransitions <= 0 || rule.flapWindowMs <= 0) return false;
  if (!flappingNow && !record.flapping) return false;
  const clearSinceMs = record.flipTimesMs[record.flipTimesMs.length - 1];
  return clearSinceMs !== undefined && nowMs - clearSinceMs < rule.flapWindowMs;
}

function promoteIfDue(
  engine: EngineState,
  record: AlertRecord,
  rule: RuleConfig,
  nowMs: number,
  out: AlertPayload[],
): void {
  // Never fire without a finding to describe (a pending alert restored from disk waits for data).
  if (record.finding === null || nowMs - record.pendingSinceMs < rule.forMs) return;
  record.status = "firing";
  record.startsAtMs = nowMs;
  record.flapping = isFlapping(record, rule, nowMs);
  if (inhibitsOthers(record.ruleKind)) countInhibitor(engine, record, +1);
  announce(record, "first", nowMs, out, rule);
}

function announce(
  record: AlertRecord,
  reason: "first" | "repeat",
  nowMs: number,
  out: AlertPayload[],
  rule: RuleConfig,
): void {
  const payload = buildPayload(record, "firing", reason, nowMs, null, rule);
  record.announced = payload;
  record.lastAnnouncedMs = nowMs;
  out.push(payload);
}

/** Resolve a firing record (announcing it) and return it to inactive; `why` (context.resolvedBy) says so in the summary. */
export function resolve(
  engine: EngineState,
  record: AlertRecord,
  nowMs: number,
  out: AlertPayload[],
  why: RemovalCause | null,
): void {
  if (record.status === "firing") {
    out.push(buildPayload(record, "resolved", "resolved", nowMs, why, null));
    if (inhibitsOthers(record.ruleKind) && record.rawActive) countInhibitor(engine, record, -1);
  }
  record.status = "inactive";
  record.rawActive = false;
  record.flapping = false;
  record.announced = null;
  // the next firing is a new episode: a cause adopts it again if it still has one
  record.causedBy = null;
}

/** Count a firing inhibiting alert (upstream_error) on the target it depends on, or stop counting it. */
export function countInhibitor(engine: EngineState, record: AlertRecord, delta: number): void {
  const targetId = record.targetIds[0];
  if (targetId === undefined) return;
  const count = (engine.inhibitingFiring.get(targetId) ?? 0) + delta;
  if (count > 0) engine.inhibitingFiring.set(targetId, count);
  else engine.inhibitingFiring.delete(targetId);
}

/** An inactive record with no flip left inside the flap window carries no information and may be dropped. */
export function isDisposable(record: AlertRecord, rule: RuleConfig | undefined, nowMs: number): boolean {
  if (record.status !== "inactive") return false;
  const last = record.flipTimesMs[record.flipTimesMs.length - 1];
  return rule === undefined || last === undefined || nowMs - last >= rule.flapWindowMs;
}
