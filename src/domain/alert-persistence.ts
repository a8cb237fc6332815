// Persisting the alert engine: a JSON-safe export of pending/firing alerts and a validating import.
import { PmError } from "./errors.js";
import {
  createEngineState,
  dropRecord,
  putRecord,
  type AlertRecord,
  type EngineState,
} from "./alert-engine.js";
import { RULE_KINDS, SEVERITIES, type AlertPayload, type RuleKind } from "./events.js";

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
    });
  }
  return { version: 1, alerts };
}

/** Rebuild an engine from persisted state; throws PmError PM_ERR_STATE on anything malformed. */
export function importEngine(persisted: unknown): EngineState {
  if (!isObject(persisted) || persisted["version"] !== 1 || !Array.isArray(persisted["alerts"]))
    throw stateError("alert state: expected {version: 1, alerts: [...]}");
  const engine = createEngineState();
  (persisted["alerts"] as unknown[]).forEach((raw, index) => {
    const record = toRecord(raw, index);
    if (engine.alerts.has(record.fingerprint))
      throw stateError(`alert state: duplicate fingerprint at ${index}`);
    putRecord(engine, record);
    // Inhibition counts a firing upstream_error only while its polls fail (not while held by flap damping).
    if (record.status === "firing" && record.ruleKind === "upstream_error" && record.rawActive)
      adjustCount(engine, record, +1);
  });
  return engine;
}

/** Replay alert transitions journaled after the checkpoint: firing ones become (or refresh) firing records, resolved ones drop theirs. */
export function restoreEngine(engine: EngineState, alerts: readonly AlertPayload[]): void {
  for (const alert of alerts) {
    // sink_error alerts belong to the sinks, the watchdog and monitor_stalled to the app, not to the rules.
    if (alert.rule === "sink_error" || alert.rule === "watchdog" || alert.rule === "monitor_stalled")
      continue;
    const existing = engine.alerts.get(alert.fingerprint);
    if (alert.status === "resolved") {
      if (existing === undefined) continue;
      if (existing.status === "firing" && existing.ruleKind === "upstream_error" && existing.rawActive)
        adjustCount(engine, existing, -1);
      dropRecord(engine, alert.fingerprint);
      continue;
    }
    const startsAtMs = Date.parse(alert.startsAt);
    if (existing !== undefined && existing.status === "firing") {
      existing.announced = alert;
      existing.lastAnnouncedMs = Math.max(existing.lastAnnouncedMs, startsAtMs);
      continue;
    }
    if (existing?.status === "pending") dropRecord(engine, alert.fingerprint);
    const publisherKey = alert.labels["publisher"] ?? "";
    const record: AlertRecord = {
      fingerprint: alert.fingerprint,
      ruleId: alert.labels["rule_id"] ?? alert.rule,
      ruleKind: alert.rule,
      labels: alert.labels,
      // Only upstream_error names its target (endpoint); others learn it from their next measurement.
      targetIds:
        alert.rule === "upstream_error" && alert.labels["endpoint"] !== undefined
          ? [alert.labels["endpoint"]]
          : [],
      scopeKey: alert.rule === "publisher_stale" || alert.rule === "publisher_missing" ? publisherKey : "",
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
    };
    putRecord(engine, record);
    if (record.ruleKind === "upstream_error") adjustCount(engine, record, +1);
  }
}

function adjustCount(engine: EngineState, record: AlertRecord, delta: number): void {
  const owner = record.targetIds[0];
  if (owner === undefined) return;
  const count = (engine.upstreamFiring.get(owner) ?? 0) + delta;
  if (count > 0) engine.upstreamFiring.set(owner, count);
  else engine.upstreamFiring.delete(owner);
}

function toRecord(raw: unknown, index: number): AlertRecord {
  const where = `alert state: alerts[${index}]`;
  if (!isObject(raw)) throw stateError(`${where} is not an object`);
  const status = raw["status"];
  if (status !== "pending" && status !== "firing") throw stateError(`${where}.status invalid`);
  const announced = raw["announced"] ?? null;
  if (announced !== null && !isPayload(announced)) throw stateError(`${where}.announced invalid`);
  if (status === "firing" && announced === null) throw stateError(`${where}: firing without payload`);
  const flips = raw["flipTimesMs"];
  if (!Array.isArray(flips) || !flips.every(isFiniteNumber)) throw stateError(`${where}.flipTimesMs invalid`);
  const targetIds = raw["targetIds"];
  if (!Array.isArray(targetIds) || targetIds.length === 0 || !targetIds.every(isString))
    throw stateError(`${where}.targetIds invalid`);
  return {
    fingerprint: str(raw, "fingerprint", where, /^[0-9a-f]{16}$/),
    ruleId: str(raw, "ruleId", where),
    ruleKind: ruleKind(raw["rule"], where),
    labels: stringRecord(raw["labels"], `${where}.labels`),
    targetIds,
    scopeKey: str(raw, "scopeKey", where),
    status,
    rawActive: bool(raw, "rawActive", where),
    pendingSinceMs: time(raw, "pendingSinceMs", where),
    startsAtMs: time(raw, "startsAtMs", where),
    lastAnnouncedMs: time(raw, "lastAnnouncedMs", where),
    flipTimesMs: flips,
    flapping: bool(raw, "flapping", where),
    finding: null,
    announced,
    checkedRule: null,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function isString(value: unknown): value is string {
  return typeof value === "string";
}
function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}
function stateError(message: string): PmError {
  return new PmError("PM_ERR_STATE", message);
}
function str(raw: Record<string, unknown>, key: string, where: string, pattern?: RegExp): string {
  const value = raw[key];
  if (typeof value !== "string" || (pattern !== undefined && !pattern.test(value)))
    throw stateError(`${where}.${key} invalid`);
  return value;
}
function bool(raw: Record<string, unknown>, key: string, where: string): boolean {
  const value = raw[key];
  if (typeof value !== "boolean") throw stateError(`${where}.${key} invalid`);
  return value;
}
function time(raw: Record<string, unknown>, key: string, where: string): number {
  const value = raw[key];
  if (value === null) return Number.NaN;
  if (!isFiniteNumber(value)) throw stateError(`${where}.${key} invalid`);
  return value;
}
function ruleKind(value: unknown, where: string): RuleKind {
  const found = RULE_KINDS.find((kind) => kind === value);
  if (found === undefined) throw stateError(`${where}.rule invalid`);
  return found;
}
function stringRecord(value: unknown, where: string): Record<string, string> {
  if (!isObject(value) || !Object.values(value).every(isString)) throw stateError(`${where} invalid`);
  return value as Record<string, string>;
}

function isPayload(value: unknown): value is AlertPayload {
  if (!isObject(value)) return false;
  const context = value["context"];
  return (
    typeof value["fingerprint"] === "string" &&
    (value["status"] === "firing" || value["status"] === "resolved") &&
    RULE_KINDS.some((kind) => kind === value["rule"]) &&
    SEVERITIES.some((severity) => severity === value["severity"]) &&
    isObject(value["labels"]) &&
    Object.values(value["labels"]).every(isString) &&
    typeof value["summary"] === "string" &&
    (value["value"] === null || typeof value["value"] === "number") &&
    (value["threshold"] === null || typeof value["threshold"] === "number") &&
    typeof value["startsAt"] === "string" &&
    (value["endsAt"] === null || typeof value["endsAt"] === "string") &&
    (value["reason"] === "first" || value["reason"] === "repeat" || value["reason"] === "resolved") &&
    isObject(context) &&
    Object.values(context).every((v) => v === null || ["string", "number", "boolean"].includes(typeof v))
  );
}
