// The sink worker's scheduling decision as pure functions: what to send, wait for or drop next, and what an
// attempt's outcome does to the worker's state and its outbox. The worker (sink-worker.ts) only runs them.
import { delayMs, sinkRetryBackoff } from "../../backoff.js";
import type { DeliveryOutcome, FinishedOutcome } from "./delivery.js";
import type { AlertSinkConfig } from "../../config/types.js";
import {
  GROUP_BY_EACH,
  planGroups,
  settleGroups,
  type GroupEntry,
  type GroupNotification,
  type GroupPolicy,
  type GroupsState,
} from "./group-schedule.js";

/** What the scheduler reads of an outbox entry (its alert event decides its group). */
export interface ScheduleEntry extends GroupEntry {
  readonly attempts: number;
}

/**
 * The worker's own state between two decisions. Only one attempt is ever in flight: the worker awaits it
 * and settles it (`settleAttempt`) before it decides again.
 */
export interface ScheduleState {
  /** No attempt before this time (backoff or Retry-After after a failure); 0 when none. */
  readonly blockedUntilMs: number;
  /** When the firing alerts were last re-sent (Alertmanager); -Infinity when a re-send is due at once. */
  readonly lastRefreshAtMs: number;
  /** What each notification group has notified (persisted with the outbox). */
  readonly groups: GroupsState;
}

/** A stop in progress: drain until `drainUntilMs`, or leave at once once `aborted`. */
export interface StopView {
  readonly drainUntilMs: number;
  /** The stop deadline passed: an attempt in flight was cut short. */
  readonly aborted: boolean;
}

/** What the worker sees at the moment it decides. */
export interface ScheduleView<E extends ScheduleEntry> {
  readonly nowMs: number;
  /** Durable outbox entries, oldest first. */
  readonly entries: readonly E[];
  /** Entries appended but not yet durable (not in `entries`). */
  readonly unwrittenCount: number;
  /** The token bucket read at `nowMs`: time until one token. */
  readonly bucket: { readonly msUntilTokenMs: number };
  /** Firing alerts this sink re-sends every `resendIntervalMs` (Alertmanager). */
  readonly firingCount: number;
  readonly stop: StopView | null;
}

/** The sink's fixed scheduling settings. */
export interface SchedulePolicy {
  /** Entries older than this are dead-lettered (`max_age`); 0 keeps them forever. */
  readonly maxAgeMs: number;
  /** Period of the re-send of firing alerts; 0 for sinks that never re-send. */
  readonly resendIntervalMs: number;
  /** How notifications are cut (grouping); over the rate limit a group simply takes in more while it waits. */
  readonly grouping: GroupPolicy;
}

/** A send of one notification: a group's (or, grouping off, one transition's), the same on every retry. */
export interface SendAction<E extends ScheduleEntry> {
  readonly kind: "send";
  readonly notification: GroupNotification<E>;
  readonly deliveryId: string;
}

/** The periodic re-send of every firing alert, decided at `atMs`. */
export interface RefreshAction {
  readonly kind: "refresh";
  readonly atMs: number;
  readonly deliveryId: string;
}

/** What the worker does next; every send or refresh takes one token first. */
export type ScheduleAction<E extends ScheduleEntry> =
  | SendAction<E>
  | RefreshAction
  /** Acknowledge `ids` without a request: a due group notification that lists none of its entries. */
  | { readonly kind: "absorb"; readonly ids: readonly string[] }
  /** Sleep `delayMs`, or less if woken (a new durable entry, the stop). */
  | { readonly kind: "wait"; readonly delayMs: number }
  /** Sleep until woken: nothing to do. */
  | { readonly kind: "idle" }
  /** Stopping with nothing durable left: wait for the appends still being written, then decide again. */
  | { readonly kind: "flush" }
  /** Stopping: drained, or the deadline leaves no time for what is left. */
  | { readonly kind: "exit" };

/** One decision: entries to dead-letter as `max_age` first, then the action, and the state to keep. */
export interface ScheduleDecision<E extends ScheduleEntry> {
  readonly expired: readonly E[];
  readonly action: ScheduleAction<E>;
  readonly state: ScheduleState;
}

/** The state of a worker that just started; `refreshNow` re-sends alerts firing before a restart at once. */
export function initialSchedule(nowMs: number, refreshNow: boolean, groups: GroupsState = {}): ScheduleState {
  return {
    blockedUntilMs: 0,
    lastRefreshAtMs: refreshNow ? Number.NEGATIVE_INFINITY : nowMs,
    groups,
  };
}

/**
 * Decide the next step: expire entries past `maxAgeMs`; find the group notification due (group wait, group
 * interval, repeat) or the re-send of firing alerts; wait for the backoff and a token (never past the oldest
 * entry's expiry) while the groups keep taking in what arrives: over the rate limit, one notification per
 * group carries what would have been many.
 */
export function decideNext<E extends ScheduleEntry>(
  state: ScheduleState,
  view: ScheduleView<E>,
  policy: SchedulePolicy,
): ScheduleDecision<E> {
  const { nowMs, stop } = view;
  if (stop !== null && nowMs >= stop.drainUntilMs) return { expired: [], action: { kind: "exit" }, state };
  const expires = policy.maxAgeMs > 0;
  const isExpired = (entry: E): boolean => expires && nowMs - entry.createdAtMs >= policy.maxAgeMs;
  const expired = view.entries.filter(isExpired);
  const entries = expired.length === 0 ? view.entries : view.entries.filter((entry) => !isExpired(entry));
  // a stopping sink keeps the group timers: what is not due before the deadline waits on disk for the restart
  const plan = planGroups(state.groups, entries, nowMs, policy.grouping);
  const refreshDue =
    stop === null && view.firingCount > 0 && nowMs - state.lastRefreshAtMs >= policy.resendIntervalMs;
  const head = entries[0];
  const expiresInMs =
    !expires || head === undefined ? undefined : Math.max(1, head.createdAtMs + policy.maxAgeMs - nowMs);
  if (plan.due === undefined && !refreshDue) {
    const nextRefreshMs =
      stop !== null || view.firingCount === 0
        ? undefined
        : state.lastRefreshAtMs + policy.resendIntervalMs - nowMs;
    const nextDueMs = plan.nextDueAtMs === undefined ? undefined : plan.nextDueAtMs - nowMs;
    return { expired, action: waitOrStop(earliest(nextRefreshMs, nextDueMs, expiresInMs), view), state };
  }
  // children of a cause alert the sink never announced: nothing to send, no token or backoff to wait for
  if (plan.due?.absorbed === true)
    return { expired, action: { kind: "absorb", ids: plan.due.entries.map((entry) => entry.id) }, state };
  const waitMs = Math.max(state.blockedUntilMs - nowMs, view.bucket.msUntilTokenMs);
  if (waitMs > 0) return { expired, action: waitOrStop(earliest(waitMs, expiresInMs), view), state };
  if (refreshDue)
    return { expired, action: { kind: "refresh", atMs: nowMs, deliveryId: `refresh-${nowMs}` }, state };
  // `plan.due` is defined here: with none, only a due refresh gets past the branch above
  const notification = plan.due as GroupNotification<E>;
  return { expired, action: { kind: "send", notification, deliveryId: notification.deliveryId }, state };
}

/** The smallest of the defined delays; undefined when none is. */
function earliest(...delaysMs: readonly (number | undefined)[]): number | undefined {
  const defined = delaysMs.filter((ms): ms is number => ms !== undefined);
  return defined.length === 0 ? undefined : Math.max(0, Math.min(...defined));
}

/**
 * How a wait ends: not stopping, sleep `delayMs` (undefined: until woken); stopping, leave when nothing is
 * left or the wait would end past the deadline, but first let appends still being written become durable.
 */
export function waitOrStop(
  delayMs: number | undefined,
  view: Pick<ScheduleView<ScheduleEntry>, "nowMs" | "unwrittenCount" | "stop">,
): ScheduleAction<never> {
  const { stop } = view;
  if (stop === null) return delayMs === undefined ? { kind: "idle" } : { kind: "wait", delayMs };
  if (delayMs === undefined) return view.unwrittenCount > 0 ? { kind: "flush" } : { kind: "exit" };
  if (view.nowMs + delayMs >= stop.drainUntilMs || stop.aborted) return { kind: "exit" };
  return { kind: "wait", delayMs };
}

/** Backoff bounds of the retries (see CHATOPS_DEFAULT_POLICY). */
export interface SinkRetryPolicy {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** First delay after a 401/403/404/410 (a configuration error), doubled per failure up to `maxDelayMs`. */
  readonly misconfiguredDelayMs: number;
}

/** Why the worker waits before its next attempt: a failed delivery, or an error of its own loop. */
export type RetryCause = Exclude<FinishedOutcome, { readonly kind: "ok" }> | { readonly kind: "loop_error" };

/**
 * Delay before the next attempt: the server's Retry-After when it sent one, else exponential backoff over
 * `consecutiveFailures` (from `misconfiguredDelayMs` after a configuration error). `jitter` is in [0, 1).
 */
export function sinkRetryDelayMs(
  cause: RetryCause,
  consecutiveFailures: number,
  jitter: number,
  policy: SinkRetryPolicy,
): number {
  if (cause.kind === "retry" && cause.retryAfterMs !== undefined) return cause.retryAfterMs;
  const baseDelayMs = cause.kind === "misconfigured" ? policy.misconfiguredDelayMs : policy.baseDelayMs;
  return delayMs(
    sinkRetryBackoff({ baseDelayMs, maxDelayMs: policy.maxDelayMs }),
    consecutiveFailures,
    () => jitter,
  );
}

/** What the outbox must record after an attempt (`groups`: the group state to persist with it). */
export type OutboxStep<E extends ScheduleEntry> =
  | { readonly kind: "ack"; readonly ids: readonly string[]; readonly groups: GroupsState }
  | { readonly kind: "dead_letter"; readonly entries: readonly E[]; readonly groups: GroupsState }
  | { readonly kind: "reschedule"; readonly entries: readonly E[] }
  | { readonly kind: "none" };

/** Facts known once an attempt finished: the clock, the sink's failure count (this one included), a jitter draw. */
export interface AttemptFacts {
  readonly nowMs: number;
  readonly consecutiveFailures: number;
  readonly jitter: number;
}

/**
 * Settle an attempt: success unblocks, acknowledges and records what the group notified; any failure blocks
 * until its retry delay; a rejected notification is dead-lettered (its group moves on as if it was sent:
 * re-sending it would be rejected again); a retryable one is rescheduled under its delivery id, so the retry
 * is the same message; a refresh counts as done when delivered or rejected. An aborted attempt changes nothing.
 */
export function settleAttempt<E extends ScheduleEntry>(
  state: ScheduleState,
  action: SendAction<E> | RefreshAction,
  outcome: DeliveryOutcome,
  facts: AttemptFacts,
  policy: SinkRetryPolicy & Pick<SchedulePolicy, "grouping">,
): { readonly state: ScheduleState; readonly outbox: OutboxStep<E> } {
  if (outcome.kind === "aborted") return { state, outbox: { kind: "none" } };
  const blockedUntilMs =
    outcome.kind === "ok"
      ? 0
      : facts.nowMs + sinkRetryDelayMs(outcome, facts.consecutiveFailures, facts.jitter, policy);
  if (action.kind === "refresh") {
    const done = outcome.kind === "ok" || outcome.kind === "rejected";
    const lastRefreshAtMs = done ? action.atMs : state.lastRefreshAtMs;
    return { state: { ...state, blockedUntilMs, lastRefreshAtMs }, outbox: { kind: "none" } };
  }
  const { notification } = action;
  const next = { ...state, blockedUntilMs };
  switch (outcome.kind) {
    case "ok":
    case "rejected": {
      const groups = settleGroups(state.groups, notification, facts.nowMs, policy.grouping);
      const settled = { ...next, groups };
      if (outcome.kind === "ok") {
        const ids = notification.entries.map((entry) => entry.id);
        return { state: settled, outbox: { kind: "ack", ids, groups } };
      }
      return { state: settled, outbox: { kind: "dead_letter", entries: notification.entries, groups } };
    }
    case "retry":
    case "misconfigured": {
      const entries = notification.entries.map((entry) => ({
        ...entry,
        attempts: entry.attempts + 1,
        nextAttemptAtMs: blockedUntilMs,
        deliveryId: action.deliveryId,
      }));
      return { state: next, outbox: { kind: "reschedule", entries } };
    }
  }
}

/** A sink's scheduling settings: its max age, Alertmanager's re-send period (0 for the others), its grouping. */
export function schedulePolicyOf(
  sink: AlertSinkConfig,
  policy: { readonly maxGroupEvents: number; readonly maxEntries: number },
): SchedulePolicy {
  const resendIntervalMs = sink.kind === "alertmanager" ? sink.resendIntervalMs : 0;
  return { maxAgeMs: sink.maxAgeMs, resendIntervalMs, grouping: groupPolicyOf(sink, policy) };
}

/** How `sink` cuts its notifications: Alertmanager batches (it groups by itself); the others group by their keys. */
export function groupPolicyOf(
  sink: AlertSinkConfig,
  policy: { readonly maxGroupEvents: number; readonly maxEntries: number },
): GroupPolicy {
  const sizes = { maxEvents: policy.maxGroupEvents, maxGroups: policy.maxEntries };
  if (sink.kind === "alertmanager")
    return { mode: { kind: "batch" }, groupWaitMs: 0, groupIntervalMs: 0, repeatIntervalMs: 0, ...sizes };
  const { groupBy, groupWaitMs, groupIntervalMs, repeatIntervalMs } = sink;
  const mode = groupBy.includes(GROUP_BY_EACH)
    ? { kind: "each" as const }
    : { kind: "group" as const, groupBy };
  return { mode, groupWaitMs, groupIntervalMs, repeatIntervalMs, ...sizes };
}
