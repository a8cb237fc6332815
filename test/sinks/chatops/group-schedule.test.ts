// Table tests of the grouping scheduler in virtual time, and a property test over random events and restarts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AlertPayload } from "../../../src/domain/events.js";
import {
  forgetAlert,
  groupKeyOf,
  groupLabelsOf,
  planGroups,
  settleGroups,
  type GroupEntry,
  type GroupPolicy,
  type GroupsState,
} from "../../../src/sinks/chatops/group-schedule.js";
import { makeAlert, makeEvent, resolvedOf } from "./helpers.js";

const T0 = 1_000_000;
const POLICY: GroupPolicy = {
  mode: { kind: "group", groupBy: [] },
  groupWaitMs: 5_000,
  groupIntervalMs: 30_000,
  repeatIntervalMs: 600_000,
  maxEvents: 100,
  maxGroups: 1_000,
};

/** Alert on `pair`, its fingerprint derived from the pair. */
function alertOn(pair: string, overrides: Partial<AlertPayload> = {}): AlertPayload {
  return makeAlert({ fingerprint: `fp-${pair}`, labels: { pair, market: "offchain" }, ...overrides });
}

/** A pending entry for event `seq`, appended at `atMs`. */
function entry(seq: number, alert: AlertPayload, atMs = T0, extra: Partial<GroupEntry> = {}): GroupEntry {
  return {
    id: `e${seq}`,
    createdAtMs: atMs,
    nextAttemptAtMs: atMs,
    payload: makeEvent(seq, alert),
    ...extra,
  };
}

const BTC = alertOn("BTC/USD");
const ETH = alertOn("ETH/USD", { severity: "warning" });

describe("group keys", () => {
  it.each([
    [[], "{}"],
    [["pair"], '{pair="BTC/USD"}'],
    [["rule", "market"], '{market="offchain",rule="price_change"}'],
    [["severity", "network"], '{network="",severity="critical"}'],
  ])("groupBy %j gives %s", (groupBy, key) => {
    expect(groupKeyOf(groupLabelsOf(BTC, groupBy))).toBe(key);
  });
});

describe("planGroups (group)", () => {
  it.each<[string, GroupsState, GroupEntry[], number, Partial<GroupPolicy>, unknown]>([
    ["nothing pending, no group: nothing to do", {}, [], T0, {}, { due: undefined, nextDueAtMs: undefined }],
    [
      "a new group waits groupWaitMs after its first alert",
      {},
      [entry(1, BTC), entry(2, ETH, T0 + 1_000)],
      T0 + 4_999,
      {},
      { due: undefined, nextDueAtMs: T0 + 5_000 },
    ],
    [
      "a group that notified waits groupIntervalMs after that",
      { "{}": { labels: {}, lastNotifiedAtMs: T0, firing: { [BTC.fingerprint]: { seq: 1, alert: BTC } } } },
      [entry(2, ETH, T0 + 1_000)],
      T0 + 10_000,
      {},
      { due: undefined, nextDueAtMs: T0 + 30_000 },
    ],
    [
      "a change after a quiet spell waits groupWaitMs, so what trickles in goes together",
      { "{}": { labels: {}, lastNotifiedAtMs: T0, firing: { [BTC.fingerprint]: { seq: 1, alert: BTC } } } },
      [entry(2, resolvedOf(BTC), T0 + 100_000)],
      T0 + 100_000,
      {},
      { due: undefined, nextDueAtMs: T0 + 105_000 },
    ],
    [
      "a group with firing alerts and nothing new repeats after repeatIntervalMs",
      { "{}": { labels: {}, lastNotifiedAtMs: T0, firing: { [BTC.fingerprint]: { seq: 1, alert: BTC } } } },
      [],
      T0 + 10_000,
      {},
      { due: undefined, nextDueAtMs: T0 + 600_000 },
    ],
    [
      "repeatIntervalMs 0: no repeat",
      { "{}": { labels: {}, lastNotifiedAtMs: T0, firing: { [BTC.fingerprint]: { seq: 1, alert: BTC } } } },
      [],
      T0 + 10_000,
      { repeatIntervalMs: 0 },
      { due: undefined, nextDueAtMs: undefined },
    ],
    [
      "a failed notification is retried when its entries are due again, not before",
      {},
      [entry(1, BTC, T0, { nextAttemptAtMs: T0 + 8_000, deliveryId: "group-x" })],
      T0 + 6_000,
      {},
      { due: undefined, nextDueAtMs: T0 + 8_000 },
    ],
  ])("%s", (_name, groups, entries, nowMs, policy, expected) => {
    expect(planGroups(groups, entries, nowMs, { ...POLICY, ...policy })).toEqual(expected);
  });

  it("flushes a new group with every alert as new, most severe first", () => {
    const { due } = planGroups({}, [entry(1, ETH), entry(2, BTC)], T0 + 5_000, POLICY);
    expect(due).toMatchObject({ key: "{}", status: "firing", repeat: false });
    expect(due?.alerts.map((a) => [a.state, a.seq])).toEqual([
      ["new", 2],
      ["new", 1],
    ]);
    expect(due?.entries.map((e) => e.id)).toEqual(["e1", "e2"]);
    expect(due?.deliveryId).toMatch(/^group-[0-9a-f]{16}$/);
  });

  it("lists what changed since the last notification: new, still firing, resolved", () => {
    const groups = settleGroups(
      {},
      planGroups({}, [entry(1, BTC), entry(2, ETH)], T0 + 5_000, POLICY).due!,
      T0 + 5_000,
      POLICY,
    );
    const sol = alertOn("SOL/USD");
    const { due } = planGroups(
      groups,
      [entry(3, resolvedOf(ETH), T0 + 9_000), entry(4, sol, T0 + 9_000)],
      T0 + 35_000,
      POLICY,
    );
    expect(due?.alerts.map((a) => [a.alert.fingerprint, a.state, a.seq])).toEqual([
      ["fp-SOL/USD", "new", 4],
      ["fp-BTC/USD", "firing", 1],
      ["fp-ETH/USD", "resolved", 3],
    ]);
    expect(due?.status).toBe("firing");
  });

  it("resolves the group once every alert is resolved, then forgets it", () => {
    const opened = settleGroups(
      {},
      planGroups({}, [entry(1, BTC)], T0 + 5_000, POLICY).due!,
      T0 + 5_000,
      POLICY,
    );
    const closing = planGroups(opened, [entry(2, resolvedOf(BTC), T0 + 20_000)], T0 + 35_000, POLICY).due!;
    expect(closing).toMatchObject({ status: "resolved", alerts: [{ state: "resolved", seq: 2 }] });
    expect(settleGroups(opened, closing, T0 + 35_000, POLICY)).toEqual({});
  });

  it("a repeat lists the firing alerts and delivers no entry", () => {
    const opened = settleGroups(
      {},
      planGroups({}, [entry(1, BTC)], T0, { ...POLICY, groupWaitMs: 0 }).due!,
      T0,
      POLICY,
    );
    const { due } = planGroups(opened, [], T0 + 600_000, POLICY);
    expect(due).toMatchObject({ repeat: true, entries: [], alerts: [{ state: "firing", seq: 1 }] });
  });

  it("groups by label: each pair its own group and key", () => {
    const policy: GroupPolicy = { ...POLICY, mode: { kind: "group", groupBy: ["pair"] } };
    const first = planGroups({}, [entry(1, BTC), entry(2, ETH, T0 + 1_000)], T0 + 5_000, policy);
    expect(first.due).toMatchObject({ key: '{pair="BTC/USD"}', labels: { pair: "BTC/USD" } });
    expect(first.nextDueAtMs).toBe(T0 + 6_000);
  });

  it("re-sends a failed notification with the same entries under the same id; newer entries wait", () => {
    const retried = [entry(1, BTC, T0, { deliveryId: "group-1" }), entry(2, ETH, T0 + 1_000)];
    const { due } = planGroups({}, retried, T0 + 9_000, POLICY);
    expect(due).toMatchObject({ deliveryId: "group-1", entries: [{ id: "e1" }] });
  });

  it("a child adopted within the group wait is left out: the parent names it, its resolve sends nothing", () => {
    const parent = makeAlert({ fingerprint: "fp-move", rule: "market_move", labels: { direction: "down" } });
    const adopted: AlertPayload = { ...ETH, reason: "repeat", causedBy: parent.fingerprint };
    const pending = [entry(1, ETH), entry(2, parent, T0 + 1_000), entry(3, adopted, T0 + 1_000)];
    const first = planGroups({}, pending, T0 + 5_000, POLICY).due!;
    expect(first.absorbed).toBe(false);
    expect(first.entries.map((e) => e.id)).toEqual(["e1", "e2", "e3"]);
    expect(first.alerts.map((a) => [a.alert.fingerprint, a.state])).toEqual([["fp-move", "new"]]);
    const opened = settleGroups({}, first, T0 + 5_000, POLICY);
    // the child resolves while its parent fires (the hub lets it through: its first firing was not muted)
    const later = planGroups(opened, [entry(4, resolvedOf(ETH), T0 + 10_000)], T0 + 35_000, POLICY).due!;
    expect(later.absorbed).toBe(true);
    expect(settleGroups(opened, later, T0 + 35_000, POLICY)).toEqual(opened);
    // an announced alert adopted later stays listed, with its parent, and its resolve is notified
    const announced = settleGroups({}, planGroups({}, [entry(1, ETH)], T0 + 5_000, POLICY).due!, T0, POLICY);
    const relinked = planGroups(announced, [entry(2, adopted, T0 + 40_000)], T0 + 45_000, POLICY).due!;
    expect(relinked).toMatchObject({
      absorbed: false,
      alerts: [{ state: "firing", alert: { causedBy: "fp-move" } }],
    });
  });

  it("the resolve of an alert no group announced is not notified (as Alertmanager)", () => {
    const { due } = planGroups({}, [entry(1, resolvedOf(BTC))], T0 + 5_000, POLICY);
    expect(due).toMatchObject({ absorbed: true, alerts: [] });
    // fired and resolved within the group wait: still notified, as resolved
    const both = planGroups({}, [entry(1, BTC), entry(2, resolvedOf(BTC))], T0 + 5_000, POLICY).due!;
    expect(both).toMatchObject({ absorbed: false, status: "resolved", alerts: [{ state: "resolved" }] });
  });

  it("forgets an alert whose resolve the sink does not hear", () => {
    const opened = settleGroups(
      {},
      planGroups({}, [entry(1, BTC), entry(2, ETH)], T0, { ...POLICY, groupWaitMs: 0 }).due!,
      T0,
      POLICY,
    );
    expect(Object.keys(forgetAlert(opened, BTC.fingerprint)["{}"]?.firing ?? {})).toEqual([ETH.fingerprint]);
    expect(forgetAlert(forgetAlert(opened, BTC.fingerprint), ETH.fingerprint)).toEqual({});
  });
});

describe("planGroups (each, batch)", () => {
  it("grouping off: the oldest entry alone, at once", () => {
    const { due } = planGroups({}, [entry(1, BTC), entry(2, ETH)], T0, { ...POLICY, mode: { kind: "each" } });
    expect(due).toMatchObject({ key: BTC.fingerprint, deliveryId: "e1", entries: [{ id: "e1" }] });
  });

  it("batch (Alertmanager): every pending entry in one POST, at once", () => {
    const { due } = planGroups({}, [entry(1, BTC), entry(2, ETH)], T0, {
      ...POLICY,
      mode: { kind: "batch" },
    });
    expect(due?.entries.map((e) => e.id)).toEqual(["e1", "e2"]);
  });
});

/** One step of a random run: an alert transition, time passing, a failed or good delivery, or a restart. */
type Step =
  | { readonly kind: "event"; readonly alert: number; readonly resolve: boolean }
  | { readonly kind: "advance"; readonly ms: number }
  | { readonly kind: "fail" }
  | { readonly kind: "restart" };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("event" as const),
    alert: fc.integer({ min: 0, max: 5 }),
    resolve: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 40_000 }) }),
  fc.constant({ kind: "fail" as const }),
  fc.constant({ kind: "restart" as const }),
);

const policyArb: fc.Arbitrary<GroupPolicy> = fc.record({
  mode: fc.oneof(
    fc.constant({ kind: "each" as const }),
    fc.constant({ kind: "batch" as const }),
    fc.subarray(["pair", "severity", "rule"]).map((groupBy) => ({ kind: "group" as const, groupBy })),
  ),
  groupWaitMs: fc.integer({ min: 0, max: 10_000 }),
  groupIntervalMs: fc.integer({ min: 0, max: 60_000 }),
  repeatIntervalMs: fc.integer({ min: 0, max: 120_000 }),
  maxEvents: fc.integer({ min: 1, max: 4 }),
  maxGroups: fc.constant(1_000),
});

const PAIRS = ["BTC/USD", "ETH/USD", "SOL/USD"];

/** Alert `i` of the random run, firing or resolved. */
function runAlert(i: number, resolve: boolean): AlertPayload {
  const alert = alertOn(PAIRS[i % 3] ?? "BTC/USD", {
    fingerprint: `fp-${i}`,
    severity: i < 3 ? "critical" : "warning",
    labels: { pair: PAIRS[i % 3] ?? "", n: String(i) },
  });
  return resolve ? resolvedOf(alert) : alert;
}

/**
 * Drive the scheduler like the worker does: deliver every due notification (or fail the next one), restart
 * by serialising the group state through JSON, then drain. Returns the seqs each delivered notification
 * carried and the final state.
 */
function simulate(policy: GroupPolicy, steps: readonly Step[]) {
  let nowMs = T0;
  let seq = 0;
  let groups: GroupsState = {};
  let pending: GroupEntry[] = [];
  let failNext = false;
  const delivered: number[][] = [];
  const latest = new Map<string, "firing" | "resolved">();
  const deliverDue = (): void => {
    for (let guard = 0; guard < 1_000; guard++) {
      const { due } = planGroups(groups, pending, nowMs, policy);
      if (due === undefined) return;
      if (failNext) {
        failNext = false;
        const ids = new Set(due.entries.map((e) => e.id));
        pending = pending.map((e) =>
          ids.has(e.id) ? { ...e, nextAttemptAtMs: nowMs + 1_000, deliveryId: due.deliveryId } : e,
        );
        if (due.entries.length > 0) return;
        continue;
      }
      delivered.push(due.entries.map((e) => e.payload.seq));
      const ids = new Set(due.entries.map((e) => e.id));
      pending = pending.filter((e) => !ids.has(e.id));
      groups = settleGroups(groups, due, nowMs, policy);
    }
    throw new Error("the scheduler never went quiet");
  };
  for (const step of steps) {
    switch (step.kind) {
      case "event": {
        seq += 1;
        const alert = runAlert(step.alert, step.resolve);
        latest.set(alert.fingerprint, alert.status);
        pending.push({
          id: `e${seq}`,
          createdAtMs: nowMs,
          nextAttemptAtMs: nowMs,
          payload: makeEvent(seq, alert),
        });
        break;
      }
      case "advance":
        nowMs += step.ms;
        break;
      case "fail":
        failNext = true;
        break;
      case "restart":
        groups = JSON.parse(JSON.stringify(groups)) as GroupsState;
        pending = JSON.parse(JSON.stringify(pending)) as GroupEntry[];
        break;
    }
    deliverDue();
  }
  // drain: time passes until nothing is pending
  for (let i = 0; i < 100 && pending.length > 0; i++) {
    nowMs += 61_000;
    deliverDue();
  }
  return { delivered, seq, groups, pending, latest };
}

describe("grouping property", () => {
  it("every event reaches exactly one notification, none twice, none lost; the state ends as the alerts do", () => {
    fc.assert(
      fc.property(policyArb, fc.array(stepArb, { maxLength: 60 }), (policy, steps) => {
        const { delivered, seq, groups, pending } = simulate(policy, steps);
        expect(pending).toEqual([]);
        const seqs = delivered.flat().sort((a, b) => a - b);
        expect(seqs).toEqual(Array.from({ length: seq }, (_, i) => i + 1));
        if (policy.mode.kind !== "group") return;
        // what the groups remember firing is exactly the alerts whose last event was notified as firing
        const { latest } = simulate(policy, steps);
        const remembered = Object.values(groups)
          .flatMap((g) => Object.keys(g.firing))
          .sort();
        const firing = [...latest]
          .filter(([, status]) => status === "firing")
          .map(([fp]) => fp)
          .sort();
        expect(remembered).toEqual(firing);
      }),
      { numRuns: 300 },
    );
  });
});
