// Cluster notification grouping, pure parts: a grouping sink's shared state (its pending entries, what each group
// notified, its backoff and Alertmanager re-send time, and which member is sending now) as one JSON record in NATS
// KV, and how taking in an event, claiming a notification and settling it change that record. The decisions
// themselves are the single daemon's (sink-schedule.ts, group-schedule.ts): this only adapts their outbox to KV.
import type { AlertEvent, AlertPayload } from "../domain/events.js";
import type { DeliveryOutcome } from "../sinks/chatops/delivery.js";
import { forgetAlert, isGroupsState, type GroupsState } from "../sinks/chatops/group-schedule.js";
import {
  decideNext,
  settleAttempt,
  type AttemptFacts,
  type OutboxStep,
  type RefreshAction,
  type ScheduleDecision,
  type ScheduleEntry,
  type SchedulePolicy,
  type ScheduleState,
  type SendAction,
  type SinkRetryPolicy,
} from "../sinks/chatops/sink-schedule.js";

/** The KV bucket of the grouping sinks' shared states (key: the sink's consumer name). */
export const SINK_GROUPS_BUCKET = "pm_sink_groups";

/** A pending notification entry: an alert event taken in from the sink's consumer (id: its seq). */
export interface SharedEntry extends ScheduleEntry {
  readonly payload: AlertEvent;
}

/** A member sending a notification: the others wait until it settled or `untilMs` passed (it died). */
export interface SendClaim {
  readonly memberId: string;
  readonly deliveryId: string;
  readonly untilMs: number;
}

/** A grouping sink's state, shared by the members through one KV record written by compare-and-set. */
export interface SharedSinkState {
  /** Highest seq taken in: a message redelivered after its take-in is not taken in twice. */
  readonly highWater: number;
  /** Pending entries, oldest first. */
  readonly entries: readonly SharedEntry[];
  readonly groups: GroupsState;
  readonly blockedUntilMs: number;
  readonly lastRefreshAtMs: number;
  /** Alerts firing now, by fingerprint (only for a sink that re-sends them: Alertmanager). */
  readonly firing: Readonly<Record<string, AlertPayload>>;
  readonly claim: SendClaim | null;
}

/** Bounds of one shared state (a KV value is at most the server's max payload, 1 MiB by default). */
export interface SharedLimits {
  readonly maxEntries: number;
  readonly maxBytes: number;
  /** Whether the sink re-sends its firing alerts (tracked in `firing`). */
  readonly resends: boolean;
}

/** The state of a sink no member has written yet (its re-send period starts now). */
export function initialSharedState(nowMs: number): SharedSinkState {
  return {
    highWater: 0,
    entries: [],
    groups: {},
    blockedUntilMs: 0,
    lastRefreshAtMs: nowMs,
    firing: {},
    claim: null,
  };
}

/** The outcome of a take-in: the new state, or why the state stays as it is. */
export type TakeIn =
  | { readonly kind: "taken"; readonly state: SharedSinkState }
  /** At or below the high-water mark: taken in before (a redelivery). */
  | { readonly kind: "known" }
  /** No room: the message is left in the stream (redelivered later). */
  | { readonly kind: "full" };

/** Append an alert event journaled at `journaledAtMs` (its group waits from then) unless known or full. */
export function takeIn(
  state: SharedSinkState,
  event: AlertEvent,
  journaledAtMs: number,
  limits: SharedLimits,
): TakeIn {
  if (event.seq <= state.highWater) return { kind: "known" };
  if (state.entries.length >= limits.maxEntries) return { kind: "full" };
  const entry: SharedEntry = {
    id: String(event.seq),
    createdAtMs: journaledAtMs,
    nextAttemptAtMs: journaledAtMs,
    attempts: 0,
    payload: { type: "alert", seq: event.seq, alert: event.alert },
  };
  const next: SharedSinkState = {
    ...state,
    highWater: event.seq,
    entries: [...state.entries, entry],
    firing: limits.resends ? trackFiring(state.firing, event.alert, limits.maxEntries) : state.firing,
  };
  return encodedBytes(next) > limits.maxBytes ? { kind: "full" } : { kind: "taken", state: next };
}

/** The firing set after `alert`'s transition (a full set takes no new alert). */
function trackFiring(
  firing: Readonly<Record<string, AlertPayload>>,
  alert: AlertPayload,
  maxEntries: number,
): Readonly<Record<string, AlertPayload>> {
  const { [alert.fingerprint]: _previous, ...rest } = firing;
  if (alert.status !== "firing") return rest;
  if (_previous === undefined && Object.keys(rest).length >= maxEntries) return firing;
  return { ...rest, [alert.fingerprint]: alert };
}

/** Forget an alert whose resolve the sink does not announce: no group lists it, no re-send carries it. */
export function forgetShared(state: SharedSinkState, fingerprint: string): SharedSinkState {
  const { [fingerprint]: _gone, ...firing } = state.firing;
  return { ...state, groups: forgetAlert(state.groups, fingerprint), firing };
}

/** The scheduler's state inside the shared state. */
function scheduleOf(state: SharedSinkState): ScheduleState {
  const { blockedUntilMs, lastRefreshAtMs, groups } = state;
  return { blockedUntilMs, lastRefreshAtMs, groups };
}

/**
 * Decide the sink's next step at `nowMs` with the single daemon's scheduler, as if this member were the only
 * one: while another member's claim holds, wait for it (it settles, or its `untilMs` passes: it died). A
 * claim of this member's own is one it left (no token): it does not hold this member back.
 * The rate limit is the cluster's token bucket, taken after the decision.
 */
export function decideShared(
  state: SharedSinkState,
  nowMs: number,
  memberId: string,
  policy: SchedulePolicy,
): ScheduleDecision<SharedEntry> {
  const schedule = scheduleOf(state);
  const { claim } = state;
  if (claim !== null && claim.memberId !== memberId && claim.untilMs > nowMs)
    return { expired: [], action: { kind: "wait", delayMs: claim.untilMs - nowMs }, state: schedule };
  return decideNext(
    schedule,
    {
      nowMs,
      entries: state.entries,
      unwrittenCount: 0,
      bucket: { msUntilTokenMs: 0 },
      firingCount: Object.keys(state.firing).length,
      stop: null,
    },
    policy,
  );
}

/** The state with `ids` gone (expired, absorbed). */
export function dropEntries(state: SharedSinkState, ids: readonly string[]): SharedSinkState {
  const gone = new Set(ids);
  return { ...state, entries: state.entries.filter((entry) => !gone.has(entry.id)) };
}

/** The state once `claim` is made (compare-and-set on the state it was decided from: one member wins). */
export function withClaim(state: SharedSinkState, claim: SendClaim): SharedSinkState {
  return { ...state, claim };
}

/** A settled attempt: the state to write, and what became of the entries (the dead letters to keep). */
export interface SharedSettlement {
  readonly state: SharedSinkState;
  readonly step: OutboxStep<SharedEntry>;
}

/**
 * Settle the claimed attempt on the state as it is now (other members took in entries meanwhile) with the
 * single daemon's `settleAttempt`: delivered entries go, the groups remember what they notified, a retry
 * keeps its delivery id and waits for the backoff. Undefined when the claim is not this one any more (it
 * expired and another member took over): the result is the other member's to record.
 */
export function settleShared(
  current: SharedSinkState,
  claim: SendClaim,
  action: SendAction<SharedEntry> | RefreshAction,
  outcome: DeliveryOutcome,
  facts: AttemptFacts,
  policy: SinkRetryPolicy & Pick<SchedulePolicy, "grouping">,
): SharedSettlement | undefined {
  const held = current.claim;
  if (held?.memberId !== claim.memberId || held.deliveryId !== claim.deliveryId) return undefined;
  const settled = settleAttempt(scheduleOf(current), action, outcome, facts, policy);
  const released = { ...current, ...settled.state, claim: null };
  const { outbox } = settled;
  switch (outbox.kind) {
    case "ack":
      return { state: dropEntries(released, outbox.ids), step: outbox };
    case "dead_letter":
      return {
        state: dropEntries(
          released,
          outbox.entries.map((entry) => entry.id),
        ),
        step: outbox,
      };
    case "reschedule": {
      const retried = new Map(outbox.entries.map((entry) => [entry.id, entry]));
      const entries = released.entries.map((entry) => retried.get(entry.id) ?? entry);
      return { state: { ...released, entries }, step: outbox };
    }
    case "none":
      return { state: released, step: outbox };
  }
}

/** The state as stored (JSON). */
export function encodeShared(state: SharedSinkState): string {
  return JSON.stringify(state);
}

function encodedBytes(state: SharedSinkState): number {
  return Buffer.byteLength(encodeShared(state));
}

/**
 * Parse a stored state (undefined when malformed). Entries and alerts are checked by `isAlertEvent`, the
 * groups by the single daemon's `isGroupsState`.
 */
export function parseShared(
  text: string,
  isAlertEvent: (value: unknown) => value is AlertEvent,
): SharedSinkState | undefined {
  let value: Partial<Record<keyof SharedSinkState, unknown>>;
  try {
    value = JSON.parse(text) as typeof value;
  } catch {
    return undefined;
  }
  const isAlert = (alert: unknown): alert is AlertPayload => isAlertEvent({ type: "alert", seq: 1, alert });
  const { highWater, entries, groups, blockedUntilMs, lastRefreshAtMs, firing, claim } = value;
  const ok =
    typeof highWater === "number" &&
    typeof blockedUntilMs === "number" &&
    typeof lastRefreshAtMs === "number" &&
    Array.isArray(entries) &&
    entries.every((entry: unknown) => isSharedEntry(entry, isAlertEvent)) &&
    isGroupsState(groups, isAlert) &&
    typeof firing === "object" &&
    firing !== null &&
    Object.values(firing).every(isAlert) &&
    (claim === null || isClaim(claim));
  return ok ? (value as SharedSinkState) : undefined;
}

function isSharedEntry(value: unknown, isAlertEvent: (value: unknown) => value is AlertEvent): boolean {
  if (typeof value !== "object" || value === null) return false;
  const { id, createdAtMs, nextAttemptAtMs, attempts, deliveryId, payload } = value as Record<
    string,
    unknown
  >;
  return (
    typeof id === "string" &&
    typeof createdAtMs === "number" &&
    typeof nextAttemptAtMs === "number" &&
    typeof attempts === "number" &&
    (deliveryId === undefined || typeof deliveryId === "string") &&
    isAlertEvent(payload)
  );
}

function isClaim(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const { memberId, deliveryId, untilMs } = value as Record<string, unknown>;
  return typeof memberId === "string" && typeof deliveryId === "string" && typeof untilMs === "number";
}
