// Table tests of the sink worker's scheduling decision: grouping under the rate limit, backoff, Retry-After,
// refresh, expiry, drain.
import { describe, expect, it } from "vitest";
import type { DeliveryOutcome } from "../../../src/sinks/chatops/delivery.js";
import { planGroups, type GroupPolicy } from "../../../src/sinks/chatops/group-schedule.js";
import {
  decideNext,
  initialSchedule,
  sinkRetryDelayMs,
  settleAttempt,
  type AttemptFacts,
  type RefreshAction,
  type ScheduleAction,
  type ScheduleEntry,
  type SchedulePolicy,
  type ScheduleState,
  type ScheduleView,
  type SendAction,
} from "../../../src/sinks/chatops/sink-schedule.js";
import { makeEvent, nthAlert, resolvedOf } from "./helpers.js";

const NOW = 1_000_000;
const EACH: GroupPolicy = {
  mode: { kind: "each" },
  groupWaitMs: 0,
  groupIntervalMs: 0,
  repeatIntervalMs: 0,
  maxEvents: 3,
  maxGroups: 100,
};
const GROUPED: GroupPolicy = {
  ...EACH,
  mode: { kind: "group", groupBy: [] },
  groupWaitMs: 5_000,
  groupIntervalMs: 30_000,
};
const POLICY: SchedulePolicy = { maxAgeMs: 0, resendIntervalMs: 0, grouping: EACH };
const RETRY = { baseDelayMs: 1_000, maxDelayMs: 60_000, misconfiguredDelayMs: 60_000 };
const IDLE: ScheduleState = { blockedUntilMs: 0, lastRefreshAtMs: NOW, groups: {} };
const TOKENS = { msUntilTokenMs: 0 };
const GROUP_ID: unknown = expect.stringMatching(/^group-[0-9a-f]{16}$/);
const NO_TOKEN = { msUntilTokenMs: 400 };

let nextSeq = 0;
/** Entry `id`, created `ageMs` ago, due now unless told otherwise; each its own alert. */
function entry(id: string, overrides: Partial<ScheduleEntry> & { ageMs?: number } = {}): ScheduleEntry {
  const { ageMs = 0, ...rest } = overrides;
  const seq = ++nextSeq;
  return {
    id,
    createdAtMs: NOW - ageMs,
    attempts: 0,
    nextAttemptAtMs: NOW - ageMs,
    payload: makeEvent(seq, nthAlert(id.charCodeAt(0))),
    ...rest,
  };
}

function view(overrides: Partial<ScheduleView<ScheduleEntry>> = {}): ScheduleView<ScheduleEntry> {
  return {
    nowMs: NOW,
    entries: [],
    unwrittenCount: 0,
    bucket: TOKENS,
    firingCount: 0,
    stop: null,
    ...overrides,
  };
}

const abc = [entry("a"), entry("b"), entry("c")];
const ids = (entries: readonly ScheduleEntry[]): string[] => entries.map((e) => e.id);

/** An action with a send shown as the ids of its entries and its delivery id. */
function shown(action: ScheduleAction<ScheduleEntry>): unknown {
  if (action.kind !== "send") return action;
  return { kind: "send", ids: ids(action.notification.entries), deliveryId: action.deliveryId };
}

/** The send of `entries` as grouping decides it (`each`: the first alone). */
function sendOf(entries: readonly ScheduleEntry[], grouping = EACH, state = IDLE): SendAction<ScheduleEntry> {
  const notification = planGroups(state.groups, entries, NOW + 1e9, grouping).due;
  if (notification === undefined) throw new Error("nothing due");
  return { kind: "send", notification, deliveryId: notification.deliveryId };
}

describe("decideNext", () => {
  it.each<[string, ScheduleState, Partial<ScheduleView<ScheduleEntry>>, Partial<SchedulePolicy>, unknown]>([
    ["nothing to do: sleep until woken", IDLE, {}, {}, { kind: "idle" }],
    [
      "only firing alerts: sleep until their re-send",
      IDLE,
      { firingCount: 2 },
      { resendIntervalMs: 60_000 },
      { kind: "wait", delayMs: 60_000 },
    ],
    [
      "re-send due (restart): refresh under a time-stamped id",
      initialSchedule(NOW, true),
      { firingCount: 2 },
      { resendIntervalMs: 60_000 },
      { kind: "refresh", atMs: NOW, deliveryId: `refresh-${NOW}` },
    ],
    [
      "re-send due but backing off: wait for the backoff",
      { ...IDLE, lastRefreshAtMs: -Infinity, blockedUntilMs: NOW + 750 },
      { firingCount: 1 },
      { resendIntervalMs: 60_000 },
      { kind: "wait", delayMs: 750 },
    ],
    [
      "re-send due and entries waiting: the refresh goes first",
      { ...IDLE, lastRefreshAtMs: -Infinity },
      { firingCount: 1, entries: abc },
      { resendIntervalMs: 60_000 },
      { kind: "refresh", atMs: NOW, deliveryId: `refresh-${NOW}` },
    ],
    [
      "one entry and a token: send it alone under its own id",
      IDLE,
      { entries: [entry("a")] },
      {},
      { kind: "send", ids: ["a"], deliveryId: "a" },
    ],
    ["no token: wait for one", IDLE, { entries: abc, bucket: NO_TOKEN }, {}, { kind: "wait", delayMs: 400 }],
    [
      "grouping off, several waiting: the oldest alone",
      IDLE,
      { entries: abc },
      {},
      { kind: "send", ids: ["a"], deliveryId: "a" },
    ],
    [
      "grouping on, a new group: wait for the group wait",
      IDLE,
      { entries: abc },
      { grouping: GROUPED },
      { kind: "wait", delayMs: 5_000 },
    ],
    [
      "grouping on, the group wait over: one notification of everything waiting (at most maxEvents)",
      IDLE,
      { entries: [...abc, entry("d")], nowMs: NOW + 5_000 },
      { grouping: GROUPED },
      { kind: "send", ids: ["a", "b", "c"], deliveryId: GROUP_ID },
    ],
    [
      "grouping on, over the rate limit: wait for a token while the group takes in more",
      IDLE,
      { entries: abc, nowMs: NOW + 5_000, bucket: NO_TOKEN },
      { grouping: GROUPED },
      { kind: "wait", delayMs: 400 },
    ],
    [
      "blocked: wait until blockedUntilMs",
      { ...IDLE, blockedUntilMs: NOW + 2_000 },
      { entries: abc },
      {},
      { kind: "wait", delayMs: 2_000 },
    ],
    [
      "the head's own retry time comes last: wait for it",
      { ...IDLE, blockedUntilMs: NOW + 2_000 },
      { entries: [entry("a", { nextAttemptAtMs: NOW + 5_000 })], bucket: NO_TOKEN },
      {},
      { kind: "wait", delayMs: 5_000 },
    ],
    [
      "a wait never passes the head's expiry",
      { ...IDLE, blockedUntilMs: NOW + 60_000 },
      { entries: [entry("a", { ageMs: 9_000 })] },
      { maxAgeMs: 10_000 },
      { kind: "wait", delayMs: 1_000 },
    ],
    [
      "a notification already attempted: the same members under the same id, others wait",
      IDLE,
      {
        nowMs: NOW + 5_000,
        entries: [entry("a", { deliveryId: "group-1" }), entry("x"), entry("b", { deliveryId: "group-1" })],
      },
      { grouping: GROUPED },
      { kind: "send", ids: ["a", "b"], deliveryId: "group-1" },
    ],
  ])("%s", (_name, state, seen, policy, action) => {
    expect(shown(decideNext(state, view(seen), { ...POLICY, ...policy }).action)).toEqual(action);
  });

  it("gives a group notification an id from its members: the same members, the same id", () => {
    const later = view({ nowMs: NOW + 5_000, entries: abc });
    const once = decideNext(IDLE, later, { ...POLICY, grouping: GROUPED }).action;
    const again = decideNext(IDLE, later, { ...POLICY, grouping: GROUPED }).action;
    const other = decideNext(
      IDLE,
      { ...later, entries: abc.slice(1) },
      { ...POLICY, grouping: GROUPED },
    ).action;
    expect(again).toMatchObject({ deliveryId: (once as SendAction<ScheduleEntry>).deliveryId });
    expect(other).not.toMatchObject({ deliveryId: (once as SendAction<ScheduleEntry>).deliveryId });
  });

  it("a stop keeps the group wait: what is not due before the deadline stays on disk", () => {
    const stop = { drainUntilMs: NOW + 2_000, aborted: false };
    const decision = decideNext(IDLE, view({ entries: abc, stop }), { ...POLICY, grouping: GROUPED });
    expect(decision.action).toEqual({ kind: "exit" });
  });

  it("expires entries at maxAgeMs and decides on the rest", () => {
    const entries = [
      entry("old", { ageMs: 10_000 }),
      entry("older", { ageMs: 20_000 }),
      entry("young", { ageMs: 9_999 }),
    ];
    const decision = decideNext(IDLE, view({ entries }), { ...POLICY, maxAgeMs: 10_000 });
    expect(ids(decision.expired)).toEqual(["old", "older"]);
    expect(decision.action).toMatchObject({ kind: "send", deliveryId: "young" });
    expect(decideNext(IDLE, view({ entries }), POLICY).expired).toEqual([]); // maxAgeMs 0: kept forever
  });

  it("expiring the last entry leaves nothing to do", () => {
    const decision = decideNext(IDLE, view({ entries: [entry("old", { ageMs: 10_000 })] }), {
      ...POLICY,
      maxAgeMs: 10_000,
    });
    expect(decision.action).toEqual({ kind: "idle" });
    expect(ids(decision.expired)).toEqual(["old"]);
  });

  describe("while stopping", () => {
    const stop = { drainUntilMs: NOW + 5_000, aborted: false };
    it.each<[string, Partial<ScheduleView<ScheduleEntry>>, unknown]>([
      ["drains what is due", { entries: abc, stop }, { kind: "send", ids: ["a"], deliveryId: "a" }],
      ["leaves when the outbox is empty", { stop }, { kind: "exit" }],
      ["first waits for appends still being written", { stop, unwrittenCount: 2 }, { kind: "flush" }],
      [
        "leaves at the deadline, whatever is left",
        { entries: abc, stop, nowMs: NOW + 5_000 },
        { kind: "exit" },
      ],
      [
        "waits for a token that comes before the deadline",
        { entries: abc, stop, bucket: NO_TOKEN },
        { kind: "wait", delayMs: 400 },
      ],
      [
        "leaves when the wait would end past the deadline",
        { entries: abc, stop: { ...stop, drainUntilMs: NOW + 400 }, bucket: NO_TOKEN },
        { kind: "exit" },
      ],
      [
        "leaves once the stop aborted",
        { entries: abc, stop: { ...stop, aborted: true }, bucket: NO_TOKEN },
        { kind: "exit" },
      ],
      ["re-sends no firing alert", { stop, firingCount: 3 }, { kind: "exit" }],
    ])("%s", (_name, seen, action) => {
      const state = { ...IDLE, lastRefreshAtMs: -Infinity };
      expect(shown(decideNext(state, view(seen), { ...POLICY, resendIntervalMs: 60_000 }).action)).toEqual(
        action,
      );
    });
  });
});

describe("settleAttempt", () => {
  const single = sendOf([abc[0] as ScheduleEntry]);
  const group = sendOf(abc, GROUPED);
  // decided before the attempt, so that it differs from the last refresh of `blocked`
  const refresh: RefreshAction = { kind: "refresh", atMs: NOW + 10, deliveryId: `refresh-${NOW + 10}` };
  const after: AttemptFacts = { nowMs: NOW + 100, consecutiveFailures: 1, jitter: 0.5 };
  const blocked = { ...IDLE, blockedUntilMs: NOW - 1 };
  const settle = (
    action: SendAction<ScheduleEntry> | RefreshAction,
    outcome: DeliveryOutcome,
    facts = after,
  ) =>
    settleAttempt(blocked, action, outcome, facts, {
      ...RETRY,
      grouping: action.kind === "send" && action === group ? GROUPED : EACH,
    });

  it.each<[string, SendAction<ScheduleEntry> | RefreshAction, DeliveryOutcome, unknown]>([
    [
      "delivered: acknowledged, unblocked",
      single,
      { kind: "ok", status: 200 },
      { state: { ...blocked, blockedUntilMs: 0 }, outbox: { kind: "ack", ids: ["a"], groups: {} } },
    ],
    [
      "rejected (400): dead-lettered, and still backed off",
      single,
      { kind: "rejected", status: 400 },
      {
        state: { ...blocked, blockedUntilMs: NOW + 100 + 750 },
        outbox: { kind: "dead_letter", entries: [abc[0]], groups: {} },
      },
    ],
    [
      "500: rescheduled at the backoff, one more attempt",
      single,
      { kind: "retry", outcome: "http_error", status: 500 },
      {
        state: { ...blocked, blockedUntilMs: NOW + 850 },
        outbox: {
          kind: "reschedule",
          entries: [{ ...abc[0], attempts: 1, nextAttemptAtMs: NOW + 850, deliveryId: "a" }],
        },
      },
    ],
    [
      "429 with Retry-After: rescheduled when the server says",
      single,
      { kind: "retry", outcome: "rate_limited", status: 429, retryAfterMs: 10_000 },
      {
        state: { ...blocked, blockedUntilMs: NOW + 10_100 },
        outbox: {
          kind: "reschedule",
          entries: [{ ...abc[0], attempts: 1, nextAttemptAtMs: NOW + 10_100, deliveryId: "a" }],
        },
      },
    ],
    [
      "401 (misconfigured): kept, with the long backoff",
      single,
      { kind: "misconfigured", status: 401 },
      {
        state: { ...blocked, blockedUntilMs: NOW + 100 + 45_000 },
        outbox: {
          kind: "reschedule",
          entries: [{ ...abc[0], attempts: 1, nextAttemptAtMs: NOW + 45_100, deliveryId: "a" }],
        },
      },
    ],
    [
      "cut short by the stop: nothing changes",
      single,
      { kind: "aborted" },
      { state: blocked, outbox: { kind: "none" } },
    ],
    [
      "refresh delivered: done at the time it was decided",
      refresh,
      { kind: "ok", status: 200 },
      { state: { ...blocked, blockedUntilMs: 0, lastRefreshAtMs: NOW + 10 }, outbox: { kind: "none" } },
    ],
    [
      "refresh rejected: done too (it would be rejected again)",
      refresh,
      { kind: "rejected", status: 400 },
      {
        state: { ...blocked, blockedUntilMs: NOW + 850, lastRefreshAtMs: NOW + 10 },
        outbox: { kind: "none" },
      },
    ],
    [
      "refresh failed: retried after the backoff",
      refresh,
      { kind: "retry", outcome: "network", code: "ECONNREFUSED" },
      { state: { ...blocked, blockedUntilMs: NOW + 850 }, outbox: { kind: "none" } },
    ],
  ])("%s", (_name, action, outcome, expected) => {
    expect(settle(action, outcome)).toEqual(expected);
  });

  it("a failed group notification is rescheduled under its id, so its retry is the same message", () => {
    const { outbox } = settle(group, { kind: "retry", outcome: "timeout" });
    expect(outbox).toEqual({
      kind: "reschedule",
      entries: abc.map((e) => ({
        ...e,
        attempts: 1,
        nextAttemptAtMs: NOW + 850,
        deliveryId: group.deliveryId,
      })),
    });
  });

  it("a delivered group notification records what the group announced, and persists it with the ack", () => {
    const { state, outbox } = settle(group, { kind: "ok", status: 200 });
    const firing = Object.keys(state.groups["{}"]?.firing ?? {});
    expect(firing).toHaveLength(3);
    expect(outbox).toEqual({ kind: "ack", ids: ["a", "b", "c"], groups: state.groups });
    const resolved = {
      ...abc[0],
      id: "r",
      payload: makeEvent(99, resolvedOf(abc[0]!.payload.alert)),
    } as ScheduleEntry;
    const closing = sendOf([resolved], GROUPED, state);
    expect(closing.notification.alerts.map((a) => a.state).sort()).toEqual(["firing", "firing", "resolved"]);
  });

  it("backs off exponentially with the failure count", () => {
    const at = (consecutiveFailures: number) =>
      settle(single, { kind: "retry", outcome: "network" }, { ...after, consecutiveFailures, jitter: 1 })
        .state.blockedUntilMs - after.nowMs;
    expect([1, 2, 3, 10].map(at)).toEqual([1_000, 2_000, 4_000, 60_000]);
  });
});

describe("sinkRetryDelayMs", () => {
  it.each<[string, Parameters<typeof sinkRetryDelayMs>[0], number, number]>([
    [
      "Retry-After wins over the backoff",
      { kind: "retry", outcome: "rate_limited", retryAfterMs: 7_000 },
      5,
      7_000,
    ],
    ["transient failure: from baseDelayMs", { kind: "retry", outcome: "http_error", status: 502 }, 2, 1_500],
    ["configuration error: from misconfiguredDelayMs", { kind: "misconfigured", status: 403 }, 1, 45_000],
    ["rejected: from baseDelayMs", { kind: "rejected", status: 400 }, 1, 750],
    ["the loop's own error: from baseDelayMs", { kind: "loop_error" }, 1, 750],
  ])("%s", (_name, cause, failures, delayMs) => {
    expect(sinkRetryDelayMs(cause, failures, 0.5, RETRY)).toBe(delayMs);
  });
});
