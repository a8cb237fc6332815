// Table tests of the sink worker's scheduling decision: digest, throttle, backoff, Retry-After, refresh, expiry, drain.
import { describe, expect, it } from "vitest";
import { fnv1a64Hex } from "../../../src/domain/fingerprint.js";
import type { DeliveryOutcome } from "../../../src/sinks/chatops/delivery.js";
import {
  decideNext,
  initialSchedule,
  sinkRetryDelayMs,
  settleAttempt,
  type AttemptFacts,
  type RefreshAction,
  type ScheduleEntry,
  type SchedulePolicy,
  type ScheduleState,
  type ScheduleView,
  type SendAction,
} from "../../../src/sinks/chatops/sink-schedule.js";

const NOW = 1_000_000;
const POLICY: SchedulePolicy = { maxAgeMs: 0, resendIntervalMs: 0, maxDigestEntries: 3, digests: true };
const RETRY = { baseDelayMs: 1_000, maxDelayMs: 60_000, misconfiguredDelayMs: 60_000 };
const IDLE: ScheduleState = { throttled: false, blockedUntilMs: 0, lastRefreshAtMs: NOW };
const THROTTLED: ScheduleState = { ...IDLE, throttled: true };
const TOKENS = { msUntilTokenMs: 0, availableTokens: 10 };
const NO_TOKEN = { msUntilTokenMs: 400, availableTokens: 0 };

/** Entry `id`, created `ageMs` ago, due now unless told otherwise. */
function entry(id: string, overrides: Partial<ScheduleEntry> & { ageMs?: number } = {}): ScheduleEntry {
  const { ageMs = 0, ...rest } = overrides;
  return { id, createdAtMs: NOW - ageMs, attempts: 0, nextAttemptAtMs: NOW - ageMs, ...rest };
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

describe("decideNext", () => {
  it.each<[string, ScheduleState, Partial<ScheduleView<ScheduleEntry>>, Partial<SchedulePolicy>, unknown]>([
    ["nothing to do: sleep until woken, throttle over", THROTTLED, {}, {}, { kind: "idle" }],
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
      { kind: "send", batch: [entry("a")], deliveryId: "a", digest: false },
    ],
    ["no token: wait for one", IDLE, { entries: abc, bucket: NO_TOKEN }, {}, { kind: "wait", delayMs: 400 }],
    [
      "several waiting and tokens enough: the oldest alone",
      IDLE,
      { entries: abc },
      {},
      { kind: "send", batch: [abc[0]], deliveryId: "a", digest: false },
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
      "throttled with several waiting: one digest of the oldest (at most maxDigestEntries)",
      THROTTLED,
      { entries: [...abc, entry("d")] },
      {},
      { kind: "send", batch: abc, deliveryId: `digest-${fnv1a64Hex("a,b,c")}`, digest: true },
    ],
    [
      "throttled with one waiting: no digest of one",
      THROTTLED,
      { entries: [entry("a")] },
      {},
      { kind: "send", batch: [entry("a")], deliveryId: "a", digest: false },
    ],
    [
      "throttled, but the service takes no digests (PagerDuty): one by one",
      THROTTLED,
      { entries: abc },
      { digests: false },
      { kind: "send", batch: [abc[0]], deliveryId: "a", digest: false },
    ],
    [
      "a digest already attempted: the same members under the same id, others wait",
      IDLE,
      {
        entries: [entry("a", { deliveryId: "digest-1" }), entry("x"), entry("b", { deliveryId: "digest-1" })],
      },
      {},
      {
        kind: "send",
        batch: [entry("a", { deliveryId: "digest-1" }), entry("b", { deliveryId: "digest-1" })],
        deliveryId: "digest-1",
        digest: true,
      },
    ],
  ])("%s", (_name, state, seen, policy, action) => {
    expect(decideNext(state, view(seen), { ...POLICY, ...policy }).action).toEqual(action);
  });

  it.each<[string, ScheduleState, Partial<ScheduleView<ScheduleEntry>>, boolean]>([
    [
      "a send with more waiting than tokens left makes the next send a digest",
      IDLE,
      { entries: abc, bucket: { msUntilTokenMs: 0, availableTokens: 2 } },
      true,
    ],
    [
      "a send with enough tokens left stays unthrottled",
      IDLE,
      { entries: abc, bucket: { msUntilTokenMs: 0, availableTokens: 3 } },
      false,
    ],
    ["waiting for a token with entries waiting throttles", IDLE, { entries: abc, bucket: NO_TOKEN }, true],
    [
      "waiting for a backoff with tokens left does not",
      { ...IDLE, blockedUntilMs: NOW + 1 },
      { entries: abc },
      false,
    ],
    ["an empty outbox ends the throttle", THROTTLED, {}, false],
    ["a digest being sent keeps the throttle until it is delivered", THROTTLED, { entries: abc }, true],
  ])("%s", (_name, state, seen, throttled) => {
    expect(decideNext(state, view(seen), POLICY).state.throttled).toBe(throttled);
  });

  it("gives a digest an id from its members: the same batch, the same id", () => {
    const once = decideNext(THROTTLED, view({ entries: abc }), POLICY).action as SendAction<ScheduleEntry>;
    const again = decideNext(THROTTLED, view({ entries: [...abc, entry("z")] }), POLICY).action;
    const other = decideNext(THROTTLED, view({ entries: abc.slice(1) }), POLICY).action;
    expect(again).toMatchObject({ deliveryId: once.deliveryId });
    expect(other).not.toMatchObject({ deliveryId: once.deliveryId });
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
      [
        "drains what is due",
        { entries: abc, stop },
        { kind: "send", batch: [abc[0]], deliveryId: "a", digest: false },
      ],
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
      expect(decideNext(state, view(seen), { ...POLICY, resendIntervalMs: 60_000 }).action).toEqual(action);
    });
  });
});

describe("settleAttempt", () => {
  const single: SendAction<ScheduleEntry> = {
    kind: "send",
    batch: [entry("a")],
    deliveryId: "a",
    digest: false,
  };
  const digest: SendAction<ScheduleEntry> = {
    kind: "send",
    batch: abc,
    deliveryId: "digest-9",
    digest: true,
  };
  // decided before the attempt, so that it differs from the last refresh of `blocked`
  const refresh: RefreshAction = { kind: "refresh", atMs: NOW + 10, deliveryId: `refresh-${NOW + 10}` };
  const after: AttemptFacts = { nowMs: NOW + 100, consecutiveFailures: 1, jitter: 0.5 };
  const blocked = { ...THROTTLED, blockedUntilMs: NOW - 1 };
  const settle = (
    action: SendAction<ScheduleEntry> | RefreshAction,
    outcome: DeliveryOutcome,
    facts = after,
  ) => settleAttempt(blocked, action, outcome, facts, RETRY);

  it.each<[string, SendAction<ScheduleEntry> | RefreshAction, DeliveryOutcome, unknown]>([
    [
      "delivered: acknowledged, unblocked",
      single,
      { kind: "ok", status: 200 },
      { state: { ...blocked, blockedUntilMs: 0 }, outbox: { kind: "ack", ids: ["a"] } },
    ],
    [
      "digest delivered: acknowledged, throttle over",
      digest,
      { kind: "ok", status: 200 },
      {
        state: { ...blocked, blockedUntilMs: 0, throttled: false },
        outbox: { kind: "ack", ids: ["a", "b", "c"] },
      },
    ],
    [
      "rejected (400): dead-lettered, and still backed off",
      single,
      { kind: "rejected", status: 400 },
      {
        state: { ...blocked, blockedUntilMs: NOW + 100 + 750 },
        outbox: { kind: "dead_letter", entries: [entry("a")] },
      },
    ],
    [
      "500: rescheduled at the backoff, one more attempt",
      single,
      { kind: "retry", outcome: "http_error", status: 500 },
      {
        state: { ...blocked, blockedUntilMs: NOW + 850 },
        outbox: { kind: "reschedule", entries: [{ ...entry("a"), attempts: 1, nextAttemptAtMs: NOW + 850 }] },
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
          entries: [{ ...entry("a"), attempts: 1, nextAttemptAtMs: NOW + 10_100 }],
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
          entries: [{ ...entry("a"), attempts: 1, nextAttemptAtMs: NOW + 45_100 }],
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

  it("a failed digest is rescheduled under its id, so its retry is the same message", () => {
    const { outbox } = settle(digest, { kind: "retry", outcome: "timeout" });
    expect(outbox).toEqual({
      kind: "reschedule",
      entries: abc.map((e) => ({ ...e, attempts: 1, nextAttemptAtMs: NOW + 850, deliveryId: "digest-9" })),
    });
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
