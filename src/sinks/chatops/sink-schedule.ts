// The sink worker's scheduling decision as pure functions: what to send, wait for or drop next, and what an
// attempt's outcome does to the worker's state and its outbox. The worker (sink-worker.ts) only runs them.
import { fnv1a64Hex } from "../../domain/fingerprint.js";
import { delayMs, sinkRetryBackoff } from "../../backoff.js";
import type { DeliveryOutcome, FinishedOutcome } from "./delivery.js";

/** What the scheduler reads of an outbox entry. */
export interface ScheduleEntry {
  readonly id: string;
  readonly createdAtMs: number;
  readonly attempts: number;
  readonly nextAttemptAtMs: number;
  /** Set once the entry was attempted inside a digest: the retry re-sends exactly that digest. */
  readonly deliveryId?: string;
}

/**
 * The worker's own state between two decisions. Only one attempt is ever in flight: the worker awaits it
 * and settles it (`settleAttempt`) before it decides again.
 */
export interface ScheduleState {
  /** The rate limit made entries wait: the next send gathers them into one digest. */
  readonly throttled: boolean;
  /** No attempt before this time (backoff or Retry-After after a failure); 0 when none. */
  readonly blockedUntilMs: number;
  /** When the firing alerts were last re-sent (Alertmanager); -Infinity when a re-send is due at once. */
  readonly lastRefreshAtMs: number;
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
  /** The token bucket read at `nowMs`: time until one token, and whole tokens available. */
  readonly bucket: { readonly msUntilTokenMs: number; readonly availableTokens: number };
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
  readonly maxDigestEntries: number;
  /** Whether the service takes several transitions as one message (never PagerDuty). */
  readonly digests: boolean;
}

/** A send of outbox entries: one alone, or a digest (the same members under the same id on every retry). */
export interface SendAction<E extends ScheduleEntry> {
  readonly kind: "send";
  readonly batch: readonly E[];
  readonly deliveryId: string;
  readonly digest: boolean;
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
export function initialSchedule(nowMs: number, refreshNow: boolean): ScheduleState {
  return {
    throttled: false,
    blockedUntilMs: 0,
    lastRefreshAtMs: refreshNow ? Number.NEGATIVE_INFINITY : nowMs,
  };
}

/**
 * Decide the next step: expire entries past `maxAgeMs`; wait for the backoff, the entry's own retry time
 * and a token (whichever is last, but never past the head's expiry); re-send firing alerts when due; else
 * send a digest already attempted, a digest of what the rate limit made wait, or the oldest entry.
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
  const head = entries[0];
  const refreshDue =
    stop === null && view.firingCount > 0 && nowMs - state.lastRefreshAtMs >= policy.resendIntervalMs;
  if (head === undefined && !refreshDue) {
    // nothing waits any more: the next burst starts with single messages again
    const nextRefreshMs =
      stop !== null || view.firingCount === 0
        ? undefined
        : state.lastRefreshAtMs + policy.resendIntervalMs - nowMs;
    return { expired, action: waitOrStop(nextRefreshMs, view), state: { ...state, throttled: false } };
  }
  const waitMs = Math.max(
    state.blockedUntilMs - nowMs,
    head === undefined ? 0 : head.nextAttemptAtMs - nowMs,
    view.bucket.msUntilTokenMs,
  );
  if (waitMs > 0) {
    const throttled = state.throttled || (view.bucket.msUntilTokenMs > 0 && head !== undefined);
    const expiresInMs =
      head === undefined ? Number.POSITIVE_INFINITY : head.createdAtMs + policy.maxAgeMs - nowMs;
    const delayMs = expires ? Math.min(waitMs, Math.max(1, expiresInMs)) : waitMs;
    return { expired, action: waitOrStop(delayMs, view), state: { ...state, throttled } };
  }
  if (refreshDue)
    return { expired, action: { kind: "refresh", atMs: nowMs, deliveryId: `refresh-${nowMs}` }, state };
  // `head` is defined here: with no entry, only a due refresh gets past the idle branch
  return { expired, ...nextSend(state, entries, view.bucket.availableTokens - 1, policy) };
}

/**
 * What to send: a digest already attempted (its members under its id, so retries are the same message),
 * else a digest of what the rate limit made wait, else the oldest entry; more entries waiting than tokens
 * left after this send makes the next one a digest.
 */
function nextSend<E extends ScheduleEntry>(
  state: ScheduleState,
  entries: readonly E[],
  tokensLeft: number,
  policy: SchedulePolicy,
): { readonly action: SendAction<E>; readonly state: ScheduleState } {
  const pendingId = entries.find((entry) => entry.deliveryId !== undefined)?.deliveryId;
  if (pendingId !== undefined) {
    const batch = entries.filter((entry) => entry.deliveryId === pendingId);
    return { action: { kind: "send", batch, deliveryId: pendingId, digest: isDigestId(pendingId) }, state };
  }
  if (state.throttled && entries.length > 1 && policy.digests) {
    const batch = entries.slice(0, policy.maxDigestEntries);
    const deliveryId = `digest-${fnv1a64Hex(batch.map((entry) => entry.id).join(","))}`;
    return { action: { kind: "send", batch, deliveryId, digest: true }, state };
  }
  const batch = entries.slice(0, 1);
  const throttled = state.throttled || entries.length - 1 > tokensLeft;
  return {
    action: { kind: "send", batch, deliveryId: batch[0]?.id ?? "", digest: false },
    state: { ...state, throttled },
  };
}

const isDigestId = (deliveryId: string): boolean => deliveryId.startsWith("digest-");

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

/** What the outbox must record after an attempt. */
export type OutboxStep<E extends ScheduleEntry> =
  | { readonly kind: "ack"; readonly ids: readonly string[] }
  | { readonly kind: "dead_letter"; readonly entries: readonly E[] }
  | { readonly kind: "reschedule"; readonly entries: readonly E[] }
  | { readonly kind: "none" };

/** Facts known once an attempt finished: the clock, the sink's failure count (this one included), a jitter draw. */
export interface AttemptFacts {
  readonly nowMs: number;
  readonly consecutiveFailures: number;
  readonly jitter: number;
}

/**
 * Settle an attempt: success unblocks (a delivered digest ends the throttle) and acknowledges; any failure
 * blocks until its retry delay; a rejected message is dead-lettered, a retryable one rescheduled (a digest
 * keeps its id); a refresh counts as done when delivered or rejected. An aborted attempt changes nothing.
 */
export function settleAttempt<E extends ScheduleEntry>(
  state: ScheduleState,
  action: SendAction<E> | RefreshAction,
  outcome: DeliveryOutcome,
  facts: AttemptFacts,
  policy: SinkRetryPolicy,
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
  const next = { ...state, blockedUntilMs };
  switch (outcome.kind) {
    case "ok": {
      const ids = action.batch.map((entry) => entry.id);
      return { state: action.digest ? { ...next, throttled: false } : next, outbox: { kind: "ack", ids } };
    }
    case "rejected":
      return { state: next, outbox: { kind: "dead_letter", entries: action.batch } };
    case "retry":
    case "misconfigured": {
      const entries = action.batch.map((entry) => ({
        ...entry,
        attempts: entry.attempts + 1,
        nextAttemptAtMs: blockedUntilMs,
        ...(action.digest ? { deliveryId: action.deliveryId } : {}),
      }));
      return { state: next, outbox: { kind: "reschedule", entries } };
    }
  }
}
