// The shared group state of a grouping sink in cluster mode, in virtual time: take-in, claims, settlement, and
// members deciding together over one compare-and-set record (one notification per group, a dead member's claim
// taken over with the same delivery id).
import { describe, expect, it } from "vitest";
import type { AlertEvent } from "../../src/domain/events.js";
import type { DeliveryOutcome } from "../../src/sinks/chatops/delivery.js";
import {
  schedulePolicyOf,
  type RefreshAction,
  type SendAction,
} from "../../src/sinks/chatops/sink-schedule.js";
import { isAlertEvent } from "../../src/state/event-schema.js";
import {
  decideShared,
  encodeShared,
  forgetShared,
  initialSharedState,
  parseShared,
  settleShared,
  takeIn,
  withClaim,
  type SendClaim,
  type SharedEntry,
  type SharedLimits,
  type SharedSinkState,
} from "../../src/cluster/sink-groups.js";
import { makeEvent, nthAlert, resolvedOf, sinkOf } from "../sinks/chatops/helpers.js";

const T0 = 1_000_000;
const SIZES = { maxGroupEvents: 200, maxEntries: 10_000 };
const RETRY = { baseDelayMs: 1_000, maxDelayMs: 300_000, misconfiguredDelayMs: 60_000 };
const LIMITS: SharedLimits = { maxEntries: 100, maxBytes: 512 * 1024, resends: false };
const GROUPED = sinkOf("webhook", "http://127.0.0.1:1/hook", {
  groupBy: [],
  groupWaitMs: 5_000,
  groupIntervalMs: 30_000,
  repeatIntervalMs: 600_000,
});
const POLICY = schedulePolicyOf(GROUPED, SIZES);
const SETTLE_POLICY = { ...RETRY, grouping: POLICY.grouping };
const OK: DeliveryOutcome = { kind: "ok", status: 200 };

/** Take events in at `atMs` (each must be taken). */
function fed(
  state: SharedSinkState,
  events: readonly AlertEvent[],
  atMs: number,
  limits = LIMITS,
): SharedSinkState {
  return events.reduce((acc, event) => {
    const taken = takeIn(acc, event, atMs, limits);
    if (taken.kind !== "taken") throw new Error(`event ${event.seq} not taken: ${taken.kind}`);
    return taken.state;
  }, state);
}

/** One compare-and-set record, as the KV bucket holds it. */
interface Record {
  state: SharedSinkState;
  revision: number;
}

/** Write `next` if `record` is still at `revision`. */
function cas(record: Record, next: SharedSinkState, revision: number): boolean {
  if (record.revision !== revision) return false;
  record.state = next;
  record.revision++;
  return true;
}

/** A member deciding at `nowMs`: the send it claimed (winning the compare-and-set), if any. */
function claimDue(
  record: Record,
  memberId: string,
  nowMs: number,
): { claim: SendClaim; action: SendAction<SharedEntry> | RefreshAction } | undefined {
  const { state, revision } = record;
  const { action } = decideShared(state, nowMs, memberId, POLICY);
  if (action.kind !== "send" && action.kind !== "refresh") return undefined;
  const claim = { memberId, deliveryId: action.deliveryId, untilMs: nowMs + 12_000 };
  return cas(record, withClaim(state, claim), revision) ? { claim, action } : undefined;
}

/** Settle a claimed send on the record as it is now. */
function settled(
  record: Record,
  sent: { claim: SendClaim; action: SendAction<SharedEntry> | RefreshAction },
  outcome: DeliveryOutcome,
  nowMs: number,
): void {
  const result = settleShared(
    record.state,
    sent.claim,
    sent.action,
    outcome,
    {
      nowMs,
      consecutiveFailures: outcome.kind === "ok" ? 0 : 1,
      jitter: 0,
    },
    SETTLE_POLICY,
  );
  if (result === undefined) throw new Error("claim lost");
  record.state = result.state;
  record.revision++;
}

describe("takeIn", () => {
  it("appends an event once: a redelivered one (at or below the high-water mark) is known", () => {
    const state = fed(initialSharedState(T0), [makeEvent(7, nthAlert(1))], T0);
    expect(state.entries.map((entry) => [entry.id, entry.createdAtMs])).toEqual([["7", T0]]);
    expect(takeIn(state, makeEvent(7, nthAlert(1)), T0 + 1, LIMITS)).toEqual({ kind: "known" });
    expect(takeIn(state, makeEvent(5, nthAlert(2)), T0 + 1, LIMITS)).toEqual({ kind: "known" });
  });

  it("is full at maxEntries or maxBytes (the message stays in the stream)", () => {
    const one = fed(initialSharedState(T0), [makeEvent(1, nthAlert(1))], T0);
    expect(takeIn(one, makeEvent(2, nthAlert(2)), T0, { ...LIMITS, maxEntries: 1 })).toEqual({
      kind: "full",
    });
    const bytes = encodeShared(one).length;
    expect(takeIn(one, makeEvent(2, nthAlert(2)), T0, { ...LIMITS, maxBytes: bytes + 10 })).toEqual({
      kind: "full",
    });
  });

  it("tracks the firing alerts only for a sink that re-sends them", () => {
    const alert = nthAlert(1);
    const resends = { ...LIMITS, resends: true };
    const firing = fed(initialSharedState(T0), [makeEvent(1, alert)], T0, resends);
    expect(Object.keys(firing.firing)).toEqual([alert.fingerprint]);
    expect(fed(firing, [makeEvent(2, resolvedOf(alert))], T0, resends).firing).toEqual({});
    expect(fed(initialSharedState(T0), [makeEvent(1, alert)], T0).firing).toEqual({});
  });
});

describe("members sharing one record", () => {
  it("notify a group once after the group wait, whoever decides, and the interval holds across members", () => {
    const record: Record = {
      state: fed(initialSharedState(T0), [makeEvent(1, nthAlert(1)), makeEvent(2, nthAlert(2))], T0),
      revision: 1,
    };
    expect(claimDue(record, "a", T0 + 4_999)).toBeUndefined();
    const first = claimDue(record, "a", T0 + 5_000);
    // b read the same revision a decided on, or reads a's claim: nothing for b either way
    expect(claimDue(record, "b", T0 + 5_000)).toBeUndefined();
    expect(first?.action.kind).toBe("send");
    settled(record, first!, OK, T0 + 5_100);
    expect(record.state.entries).toEqual([]);
    expect(Object.keys(record.state.groups)).toEqual(["{}"]);
    // a third alert joins the notified group: due a group interval after the first notification, on b
    record.state = fed(record.state, [makeEvent(3, nthAlert(3))], T0 + 6_000);
    expect(claimDue(record, "b", T0 + 30_000)).toBeUndefined();
    const second = claimDue(record, "b", T0 + 35_100);
    expect(second?.action.kind === "send" && second.action.notification.alerts.map((a) => a.state)).toEqual([
      "new",
      "firing",
      "firing",
    ]);
  });

  it("take over a dead member's claim once it expires, with the same delivery id", () => {
    const record: Record = {
      state: fed(initialSharedState(T0), [makeEvent(1, nthAlert(1))], T0),
      revision: 1,
    };
    const dead = claimDue(record, "a", T0 + 5_000);
    expect(decideShared(record.state, T0 + 6_000, "b", POLICY).action).toEqual({
      kind: "wait",
      delayMs: 11_000,
    });
    const taken = claimDue(record, "b", T0 + 17_000);
    expect(taken?.action.deliveryId).toBe(dead?.action.deliveryId);
    // the dead member's late settlement is refused: the claim is b's now
    expect(
      settleShared(
        record.state,
        dead!.claim,
        dead!.action,
        OK,
        { nowMs: T0, consecutiveFailures: 0, jitter: 0 },
        SETTLE_POLICY,
      ),
    ).toBeUndefined();
  });

  it("settle on the record as it is: entries taken in meanwhile stay, a retry keeps its delivery id", () => {
    const record: Record = {
      state: fed(initialSharedState(T0), [makeEvent(1, nthAlert(1))], T0),
      revision: 1,
    };
    const sent = claimDue(record, "a", T0 + 5_000)!;
    record.state = fed(record.state, [makeEvent(2, nthAlert(2))], T0 + 5_050);
    settled(
      record,
      sent,
      { kind: "retry", outcome: "http_error", status: 503, retryAfterMs: 2_000 },
      T0 + 5_100,
    );
    expect(record.state.claim).toBeNull();
    expect(record.state.blockedUntilMs).toBe(T0 + 7_100);
    expect(record.state.entries.map((entry) => [entry.id, entry.deliveryId])).toEqual([
      ["1", sent.action.deliveryId],
      ["2", undefined],
    ]);
    // the retry is the same notification (seq 2 waits for the group's next one), on any member
    const retry = claimDue(record, "b", T0 + 7_100);
    expect(retry?.action.deliveryId).toBe(sent.action.deliveryId);
    expect(retry?.action.kind === "send" && retry.action.notification.entries.map((e) => e.id)).toEqual([
      "1",
    ]);
  });

  it("re-send Alertmanager's firing alerts every resend interval, from whichever member", () => {
    const am = sinkOf("alertmanager", "http://127.0.0.1:1");
    const amPolicy = schedulePolicyOf(am, SIZES);
    const resends = { ...LIMITS, resends: true };
    const state = fed(initialSharedState(T0), [makeEvent(1, nthAlert(1))], T0, resends);
    const batch = decideShared(state, T0, "a", amPolicy).action;
    expect(batch.kind === "send" && batch.notification.entries.map((e) => e.id)).toEqual(["1"]);
    const sent = { ...state, entries: [] };
    expect(decideShared(sent, T0 + 59_999, "b", amPolicy).action).toEqual({ kind: "wait", delayMs: 1 });
    expect(decideShared(sent, T0 + 60_000, "b", amPolicy).action.kind).toBe("refresh");
  });
});

describe("forgetShared and the stored form", () => {
  it("forgets an alert from the groups and the firing set", () => {
    const alert = nthAlert(1);
    const state: SharedSinkState = {
      ...initialSharedState(T0),
      groups: {
        "{}": { labels: {}, lastNotifiedAtMs: T0, firing: { [alert.fingerprint]: { seq: 1, alert } } },
      },
      firing: { [alert.fingerprint]: alert },
    };
    expect(forgetShared(state, alert.fingerprint)).toEqual({ ...state, groups: {}, firing: {} });
  });

  it("reads back what it wrote, and refuses a malformed record", () => {
    const state = withClaim(fed(initialSharedState(T0), [makeEvent(1, nthAlert(1))], T0), {
      memberId: "a",
      deliveryId: "group-1",
      untilMs: T0,
    });
    expect(parseShared(encodeShared(state), isAlertEvent)).toEqual(state);
    expect(parseShared("{", isAlertEvent)).toBeUndefined();
    expect(parseShared(JSON.stringify({ ...state, entries: [{ id: 1 }] }), isAlertEvent)).toBeUndefined();
  });
});
