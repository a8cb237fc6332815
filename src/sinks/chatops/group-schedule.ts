// Notification grouping per sink, with Alertmanager's semantics (group_by, group_wait, group_interval,
// repeat_interval) as pure functions of (pending events, group state, time): which group notification is due,
// what it lists, and the group state once it was delivered. The worker (sink-worker.ts) only runs them; the
// state is plain JSON, persisted with the sink's outbox (outbox.ts) so a restart neither re-announces nor
// loses a resolve.
import { fnv1a64Hex } from "../../domain/fingerprint.js";
import { severityRank, type AlertEvent, type AlertPayload } from "../../domain/events.js";

/** `groupBy` value that turns grouping off: every transition is notified on its own, at once. */
export const GROUP_BY_EACH = "...";

/**
 * How a sink cuts notifications: `group` (Alertmanager's grouping by the `groupBy` labels; `rule` and
 * `severity` are labels too), `each` (grouping off: one notification per transition, oldest first), or
 * `batch` (the Alertmanager sink: every pending transition in one POST, no waits, no group state, since
 * Alertmanager groups by itself).
 */
export type GroupMode =
  | { readonly kind: "group"; readonly groupBy: readonly string[] }
  | { readonly kind: "each" }
  | { readonly kind: "batch" };

/** A sink's grouping settings. */
export interface GroupPolicy {
  readonly mode: GroupMode;
  /** A new group waits this long for more alerts before its first notification. */
  readonly groupWaitMs: number;
  /** A group that notified waits this long before notifying what changed since. */
  readonly groupIntervalMs: number;
  /** A group with firing alerts and nothing new is notified again after this long; 0 = never. */
  readonly repeatIntervalMs: number;
  /** Most events one notification carries (the rest go in the group's next one). */
  readonly maxEvents: number;
  /** Most groups kept; beyond it a new group notifies without remembering what it sent (logged by the worker). */
  readonly maxGroups: number;
}

/** A pending outbox entry as the grouping sees it. */
export interface GroupEntry {
  readonly id: string;
  readonly createdAtMs: number;
  readonly nextAttemptAtMs: number;
  /** Set once the entry was attempted: its retry re-sends exactly the notification of that id. */
  readonly deliveryId?: string;
  readonly payload: AlertEvent;
}

/** An alert as its group last notified it while firing (resolved ones are dropped once notified). */
export interface NotifiedAlert {
  readonly seq: number;
  readonly alert: AlertPayload;
}

/** What one group has notified: its labels, when, and the alerts it announced that still fire. */
export interface GroupRecord {
  readonly labels: Readonly<Record<string, string>>;
  readonly lastNotifiedAtMs: number;
  /** By fingerprint. */
  readonly firing: Readonly<Record<string, NotifiedAlert>>;
}

/** Every group of a sink, by group key (plain JSON: it is persisted as is). */
export type GroupsState = Readonly<Record<string, GroupRecord>>;

/** An alert's state in a notification, relative to the group's previous one. */
export type GroupAlertState = "new" | "firing" | "resolved";

/** One alert listed in a group notification. */
export interface GroupAlert {
  readonly state: GroupAlertState;
  /** Seq of the alert's latest transition (at or below a seq an earlier notification carried when `firing` with no new event). */
  readonly seq: number;
  readonly alert: AlertPayload;
}

/** A notification to send: the entries (events) it delivers and every alert of the group with its state. */
export interface GroupNotification<E extends GroupEntry> {
  readonly key: string;
  /** The groupBy labels' values (empty for the one group of `groupBy: []`, the alert's labels with `each`). */
  readonly labels: Readonly<Record<string, string>>;
  /** `firing` while any listed alert fires; `resolved` once the whole group is. */
  readonly status: "firing" | "resolved";
  /** Most severe first: firing before resolved, then severity, new before still firing, then seq. */
  readonly alerts: readonly GroupAlert[];
  /** The pending entries this notification delivers, oldest first (none for a repeat). */
  readonly entries: readonly E[];
  /** Nothing changed: the repeat of a group with firing alerts after `repeatIntervalMs`. */
  readonly repeat: boolean;
  /** The same on every retry of this notification (the entries keep it), so receivers can deduplicate. */
  readonly deliveryId: string;
  /**
   * The entries only concern alerts the sink never announced and leaves out (children of a cause alert, and
   * their resolves): nothing to send; the entries are acknowledged and the group state stays as it is.
   */
  readonly absorbed: boolean;
}

/** The next notification due now (if any) and when the next one is due after it (undefined: none waits). */
export interface GroupPlan<E extends GroupEntry> {
  readonly due: GroupNotification<E> | undefined;
  readonly nextDueAtMs: number | undefined;
}

/** The group key of an alert under `groupBy`: `{}` for `[]`, e.g. `{market="onchain",rule="price_change"}`. */
export function groupLabelsOf(alert: AlertPayload, groupBy: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const name of [...groupBy].sort()) labels[name] = labelValue(alert, name);
  return labels;
}

/** Render group labels as a key, Alertmanager style: `{a="x",b="y"}`. */
export function groupKeyOf(labels: Readonly<Record<string, string>>): string {
  const parts = Object.entries(labels).map(([name, value]) => `${name}=${JSON.stringify(value)}`);
  return `{${parts.join(",")}}`;
}

/** A label's value for grouping; `rule` and `severity` are the alert's own fields unless a label says otherwise. */
function labelValue(alert: AlertPayload, name: string): string {
  const value = alert.labels[name];
  if (value !== undefined) return value;
  if (name === "rule") return alert.rule;
  if (name === "severity") return alert.severity;
  return "";
}

/** The next notification due at `nowMs` for `entries` (durable, pending, oldest first) and `groups`. */
export function planGroups<E extends GroupEntry>(
  groups: GroupsState,
  entries: readonly E[],
  nowMs: number,
  policy: GroupPolicy,
): GroupPlan<E> {
  const { mode } = policy;
  switch (mode.kind) {
    case "each":
      return planEach(entries, nowMs);
    case "batch":
      return planBatch(entries, nowMs, policy.maxEvents);
    case "group":
      return planGrouped(groups, entries, nowMs, policy, mode.groupBy);
  }
}

/** Grouping off: the oldest entry due alone (a retried one under its id). */
function planEach<E extends GroupEntry>(entries: readonly E[], nowMs: number): GroupPlan<E> {
  const head = entries[0];
  if (head === undefined) return { due: undefined, nextDueAtMs: undefined };
  if (head.nextAttemptAtMs > nowMs) return { due: undefined, nextDueAtMs: head.nextAttemptAtMs };
  const { alert, seq } = head.payload;
  const state = alert.status === "resolved" ? "resolved" : "new";
  return {
    due: {
      key: alert.fingerprint,
      labels: alert.labels,
      status: alert.status,
      alerts: [{ state, seq, alert }],
      entries: [head],
      repeat: false,
      deliveryId: head.deliveryId ?? head.id,
      absorbed: false,
    },
    nextDueAtMs: undefined,
  };
}

/** Alertmanager: every pending entry in one POST (a retried batch exactly as it was). */
function planBatch<E extends GroupEntry>(
  entries: readonly E[],
  nowMs: number,
  maxEvents: number,
): GroupPlan<E> {
  const retried = retriedBatch(entries);
  const batch = retried ?? entries.slice(0, maxEvents);
  if (batch.length === 0) return { due: undefined, nextDueAtMs: undefined };
  const dueAtMs = Math.max(...batch.map((entry) => entry.nextAttemptAtMs));
  if (dueAtMs > nowMs) return { due: undefined, nextDueAtMs: dueAtMs };
  const deliveryId = retried?.[0]?.deliveryId ?? `batch-${fnv1a64Hex(batch.map((e) => e.id).join(","))}`;
  return {
    due: {
      key: "",
      labels: {},
      status: batch.some((e) => e.payload.alert.status === "firing") ? "firing" : "resolved",
      alerts: listAlerts(undefined, batch, new Set()),
      entries: batch,
      repeat: false,
      deliveryId,
      absorbed: false,
    },
    nextDueAtMs: undefined,
  };
}

/** The entries of the first notification already attempted (they carry its delivery id), if any. */
function retriedBatch<E extends GroupEntry>(entries: readonly E[]): E[] | undefined {
  const id = entries.find((entry) => entry.deliveryId !== undefined)?.deliveryId;
  return id === undefined ? undefined : entries.filter((entry) => entry.deliveryId === id);
}

/** One group's candidate: its key, labels, the entries it would deliver and when it is due. */
interface Candidate<E extends GroupEntry> {
  readonly key: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly entries: readonly E[];
  readonly dueAtMs: number;
  readonly deliveryId: string | undefined;
}

/** Alertmanager's grouping: the earliest due group notification, and when the next is due. */
function planGrouped<E extends GroupEntry>(
  groups: GroupsState,
  entries: readonly E[],
  nowMs: number,
  policy: GroupPolicy,
  groupBy: readonly string[],
): GroupPlan<E> {
  const candidates = [
    ...pendingCandidates(groups, entries, policy, groupBy),
    ...repeatCandidates(groups, entries, policy, groupBy),
  ];
  let due: Candidate<E> | undefined;
  let nextDueAtMs: number | undefined;
  for (const candidate of candidates) {
    if (candidate.dueAtMs <= nowMs) {
      if (due === undefined || candidate.dueAtMs < due.dueAtMs) due = candidate;
    } else if (nextDueAtMs === undefined || candidate.dueAtMs < nextDueAtMs) nextDueAtMs = candidate.dueAtMs;
  }
  return { due: due === undefined ? undefined : notificationOf(groups, due), nextDueAtMs };
}

/**
 * Groups with pending entries: due `groupWaitMs` after their oldest entry, and for a group that notified, no
 * sooner than `groupIntervalMs` after its last notification.
 */
function pendingCandidates<E extends GroupEntry>(
  groups: GroupsState,
  entries: readonly E[],
  policy: GroupPolicy,
  groupBy: readonly string[],
): Candidate<E>[] {
  const byKey = new Map<string, { labels: Record<string, string>; entries: E[] }>();
  for (const entry of entries) {
    const labels = groupLabelsOf(entry.payload.alert, groupBy);
    const key = groupKeyOf(labels);
    const group = byKey.get(key);
    if (group === undefined) byKey.set(key, { labels, entries: [entry] });
    else group.entries.push(entry);
  }
  return [...byKey].map(([key, group]) => {
    const retried = retriedBatch(group.entries);
    const batch = retried ?? group.entries.slice(0, policy.maxEvents);
    const record = groups[key];
    const oldestMs = Math.min(...batch.map((entry) => entry.createdAtMs));
    // a new group waits groupWaitMs; a notified one groupIntervalMs after its last message, and a change after
    // a quiet spell still waits groupWaitMs, so resolves that trickle in over a few polls close it together
    const waitedAtMs = oldestMs + policy.groupWaitMs;
    const timedAtMs =
      record === undefined
        ? waitedAtMs
        : Math.max(waitedAtMs, record.lastNotifiedAtMs + policy.groupIntervalMs);
    const retryAtMs = Math.max(...batch.map((entry) => entry.nextAttemptAtMs));
    return {
      key,
      labels: group.labels,
      entries: batch,
      dueAtMs: Math.max(timedAtMs, retryAtMs),
      deliveryId: retried?.[0]?.deliveryId,
    };
  });
}

/** Groups with firing alerts and nothing pending: due again `repeatIntervalMs` after their last notification. */
function repeatCandidates<E extends GroupEntry>(
  groups: GroupsState,
  entries: readonly E[],
  policy: GroupPolicy,
  groupBy: readonly string[],
): Candidate<E>[] {
  if (policy.repeatIntervalMs <= 0) return [];
  const pendingKeys = new Set(
    entries.map((entry) => groupKeyOf(groupLabelsOf(entry.payload.alert, groupBy))),
  );
  return Object.entries(groups)
    .filter(([key, record]) => !pendingKeys.has(key) && Object.keys(record.firing).length > 0)
    .map(([key, record]) => ({
      key,
      labels: record.labels,
      entries: [],
      dueAtMs: record.lastNotifiedAtMs + policy.repeatIntervalMs,
      deliveryId: undefined,
    }));
}

/** The notification of a due candidate: every alert of the group with its state since the last one. */
function notificationOf<E extends GroupEntry>(
  groups: GroupsState,
  candidate: Candidate<E>,
): GroupNotification<E> {
  const record = groups[candidate.key];
  const unlisted = unannounced(groups, candidate.entries);
  const alerts = listAlerts(record, candidate.entries, unlisted);
  const repeat = candidate.entries.length === 0;
  const ids = candidate.entries.map((entry) => entry.id).join(",");
  const deliveryId =
    candidate.deliveryId ??
    (repeat
      ? `repeat-${fnv1a64Hex(`${candidate.key}@${record?.lastNotifiedAtMs ?? 0}`)}`
      : `group-${fnv1a64Hex(`${candidate.key}|${ids}`)}`);
  return {
    key: candidate.key,
    labels: candidate.labels,
    status: alerts.some((a) => a.alert.status === "firing") ? "firing" : "resolved",
    alerts,
    entries: candidate.entries,
    repeat,
    deliveryId,
    absorbed: !repeat && candidate.entries.every((entry) => unlisted.has(entry.payload.alert.fingerprint)),
  };
}

/**
 * Alerts of `entries` that no group announced and that the sink leaves out: one whose latest transition is as
 * the child of a firing cause alert (causedBy: its parent names it), and the resolve of one that was a child
 * when it last fired here, or did not fire here at all (as Alertmanager, a sink never notifies the resolve of
 * an alert it never announced). A child that fired before its parent adopted it within the group wait is so
 * never paged on its own: the parent's notification names the incident.
 */
function unannounced(groups: GroupsState, entries: readonly GroupEntry[]): Set<string> {
  const latest = new Map<string, AlertPayload>();
  const lastFiring = new Map<string, AlertPayload>();
  for (const { payload } of entries) {
    latest.set(payload.alert.fingerprint, payload.alert);
    if (payload.alert.status === "firing") lastFiring.set(payload.alert.fingerprint, payload.alert);
  }
  const records = Object.values(groups);
  const unlisted = new Set<string>();
  for (const [fingerprint, alert] of latest) {
    if (records.some((record) => record.firing[fingerprint] !== undefined)) continue;
    const firedAsChild = lastFiring.get(fingerprint)?.causedBy !== undefined;
    const neverFired = !lastFiring.has(fingerprint);
    if (alert.causedBy !== undefined || (alert.status === "resolved" && (neverFired || firedAsChild)))
      unlisted.add(fingerprint);
  }
  return unlisted;
}

/** The group's alerts: those it announced that still fire, updated by the entries' latest transition each. */
function listAlerts(
  record: GroupRecord | undefined,
  entries: readonly GroupEntry[],
  unlisted: ReadonlySet<string>,
): GroupAlert[] {
  const byFingerprint = new Map<string, GroupAlert>();
  for (const [fingerprint, notified] of Object.entries(record?.firing ?? {}))
    byFingerprint.set(fingerprint, { state: "firing", seq: notified.seq, alert: notified.alert });
  for (const { payload } of entries) {
    const { alert, seq } = payload;
    if (unlisted.has(alert.fingerprint)) continue;
    const announced = record?.firing[alert.fingerprint] !== undefined;
    const state: GroupAlertState = alert.status === "resolved" ? "resolved" : announced ? "firing" : "new";
    byFingerprint.set(alert.fingerprint, { state, seq, alert });
  }
  return [...byFingerprint.values()].sort(compareAlerts);
}

const STATE_ORDER: Readonly<Record<GroupAlertState, number>> = { new: 0, firing: 1, resolved: 2 };

/** Firing before resolved, most severe first, new before still firing, then by seq. */
function compareAlerts(a: GroupAlert, b: GroupAlert): number {
  const firing = (x: GroupAlert): number => (x.alert.status === "firing" ? 0 : 1);
  return (
    firing(a) - firing(b) ||
    severityRank(b.alert.severity) - severityRank(a.alert.severity) ||
    STATE_ORDER[a.state] - STATE_ORDER[b.state] ||
    a.seq - b.seq
  );
}

/**
 * The groups once `notification` was delivered at `nowMs` (or rejected: its events are gone either way):
 * the group remembers the firing alerts it listed and when; a group left with none is forgotten (Alertmanager
 * removes resolved alerts once notified). `each` and `batch` keep no state.
 */
export function settleGroups<E extends GroupEntry>(
  groups: GroupsState,
  notification: GroupNotification<E>,
  nowMs: number,
  policy: GroupPolicy,
): GroupsState {
  if (policy.mode.kind !== "group" || notification.absorbed) return groups;
  const firing: Record<string, NotifiedAlert> = {};
  for (const { alert, seq } of notification.alerts)
    if (alert.status === "firing") firing[alert.fingerprint] = { seq, alert };
  // an alert now in this group is no other group's any more (groupBy changed by a reload)
  const { [notification.key]: _previous, ...rest } = groups;
  const others = notification.entries.reduce(
    (acc, entry) => forgetAlert(acc, entry.payload.alert.fingerprint),
    rest as GroupsState,
  );
  if (Object.keys(firing).length === 0) return others;
  if (_previous === undefined && Object.keys(others).length >= policy.maxGroups) return others;
  return { ...others, [notification.key]: { labels: notification.labels, lastNotifiedAtMs: nowMs, firing } };
}

/** Forget an alert the sink will not hear resolve (its resolve is not routed here): later notifications stop listing it. */
export function forgetAlert(groups: GroupsState, fingerprint: string): GroupsState {
  let changed = false;
  const next: Record<string, GroupRecord> = {};
  for (const [key, record] of Object.entries(groups)) {
    if (record.firing[fingerprint] === undefined) {
      next[key] = record;
      continue;
    }
    changed = true;
    const { [fingerprint]: _gone, ...firing } = record.firing;
    if (Object.keys(firing).length > 0) next[key] = { ...record, firing };
  }
  return changed ? next : groups;
}

/** Whether `value` is a GroupsState read back from disk (shape only; alerts as the outbox checks them). */
export function isGroupsState(
  value: unknown,
  isAlert: (alert: unknown) => alert is AlertPayload,
): value is GroupsState {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.values(value).every((record: unknown) => {
    if (typeof record !== "object" || record === null) return false;
    const { labels, lastNotifiedAtMs, firing } = record as Record<string, unknown>;
    return (
      typeof lastNotifiedAtMs === "number" &&
      Number.isFinite(lastNotifiedAtMs) &&
      isStringRecord(labels) &&
      typeof firing === "object" &&
      firing !== null &&
      Object.values(firing).every((n: unknown) => {
        if (typeof n !== "object" || n === null) return false;
        const { seq, alert } = n as Record<string, unknown>;
        return typeof seq === "number" && isAlert(alert);
      })
    );
  });
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    typeof value === "object" &&
    value !== null &&
    Object.values(value).every((v: unknown) => typeof v === "string")
  );
}
