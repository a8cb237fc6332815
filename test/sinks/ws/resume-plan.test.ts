// The resume planner as a pure function: exact record, compaction, and the bound on what one connection keeps.
import { describe, expect, it } from "vitest";
import type { JournaledEvent, Severity } from "../../../src/domain/events.js";
import { applySubscribe, type SubscriptionFilter } from "../../../src/sinks/ws/filter.js";
import {
  MAX_SENT_RANGES,
  changeFilter,
  filterWithin,
  initialDelivery,
  planReplay,
  wasSent,
  type DeliveryState,
} from "../../../src/sinks/ws/resume.js";
import { alert } from "./harness.js";

const filterOf = (
  pairs: string[] = [],
  extra: { channels?: ("alerts" | "lifecycle")[]; minSeverity?: Severity } = {},
): SubscriptionFilter =>
  applySubscribe(initialDelivery(0).filter, {
    op: "subscribe",
    id: null,
    channels: extra.channels ?? ["alerts"],
    pairs,
    ...(extra.minSeverity === undefined ? {} : { minSeverity: extra.minSeverity }),
  });
const BTC = filterOf(["BTC/USD"]);
const ETH = filterOf(["ETH/USD"]);
const ALL = filterOf([]);
const event = (seq: number, pair: string): JournaledEvent => ({
  type: "alert",
  seq,
  alert: alert({ pair }),
});
const journal = (lastSeq: number, oldestSeq = 1) => ({ lastSeq, oldestSeq });

/** Apply filter changes at the given seqs. */
function toggle(state: DeliveryState, steps: [filter: SubscriptionFilter, atSeq: number][], oldestSeq = 1) {
  let forgotten = 0;
  for (const [filter, atSeq] of steps) {
    const change = changeFilter(state, filter, journal(atSeq, oldestSeq));
    state = change.state;
    forgotten += change.forgotten;
  }
  return { state, forgotten };
}

describe("filterWithin", () => {
  it.each<[string, SubscriptionFilter, SubscriptionFilter, boolean]>([
    ["a pair inside all pairs", BTC, ALL, true],
    ["all pairs inside one pair", ALL, BTC, false],
    ["one pair inside another", BTC, ETH, false],
    [
      "critical inside warning",
      filterOf([], { minSeverity: "critical" }),
      filterOf([], { minSeverity: "warning" }),
      true,
    ],
    [
      "warning inside critical",
      filterOf([], { minSeverity: "warning" }),
      filterOf([], { minSeverity: "critical" }),
      false,
    ],
    ["lifecycle inside alerts", filterOf([], { channels: ["lifecycle"] }), ALL, false],
    [
      "alerts+lifecycle inside lifecycle",
      filterOf([], { channels: ["alerts", "lifecycle"] }),
      filterOf([], { channels: ["lifecycle"] }),
      false,
    ],
  ])("%s", (_name, inner, outer, want) => {
    expect(filterWithin(inner, outer)).toBe(want);
  });
});

describe("the sent-events record", () => {
  it("knows exactly what live delivery under each filter sent", () => {
    const { state } = toggle(initialDelivery(0), [
      [BTC, 0],
      [ETH, 10],
      [ALL, 20],
    ]);
    const table: [seq: number, pair: string, sent: boolean][] = [
      [5, "BTC/USD", true],
      [5, "ETH/USD", false],
      [15, "BTC/USD", false],
      [15, "ETH/USD", true],
      [25, "SOL/USD", true],
    ];
    for (const [seq, pair, sent] of table)
      expect(wasSent(state, event(seq, pair)), `${seq} ${pair}`).toBe(sent);
  });

  it("replays, under the new filter, only what was not sent, and folds the replay into live delivery", () => {
    const { state } = toggle(initialDelivery(0), [[BTC, 0]]);
    const events = [event(1, "BTC/USD"), event(2, "ETH/USD"), event(3, "BTC/USD")];
    const plan = planReplay(state, {
      filter: ALL,
      since: 0,
      journal: journal(3),
      replay: { gap: null, events },
    });
    expect(plan).toMatchObject({ ok: true, gap: null, events: [events[1]] });
    if (!plan.ok) return;
    // (0, 3] under all pairs is now sent: the BTC range and the replay merge into live delivery from seq 0
    expect(plan.state).toMatchObject({ filter: ALL, liveFromSeq: 0, ranges: [], floorSeq: 0 });
  });

  it("drops what the journal no longer holds instead of counting it against the limit", () => {
    let state = initialDelivery(0);
    let forgotten = 0;
    for (let i = 1; i <= 1_000; i++) {
      // a journal of 50 events; one event between changes
      const change = changeFilter(state, i % 2 === 0 ? BTC : ETH, journal(i, Math.max(1, i - 49)));
      state = change.state;
      forgotten += change.forgotten;
    }
    expect(state.ranges.length).toBeLessThanOrEqual(50);
    expect(forgotten).toBe(0);
    expect(state.floorSeq).toBe(0);
  });

  it("keeps at most MAX_SENT_RANGES ranges, raising a floor below which since is refused", () => {
    const steps = Array.from({ length: 200 }, (_, i): [SubscriptionFilter, number] => [
      i % 2 === 0 ? BTC : ETH,
      i,
    ]);
    const { state, forgotten } = toggle(initialDelivery(0), steps);
    expect(state.ranges).toHaveLength(MAX_SENT_RANGES);
    expect(forgotten).toBe(199 - MAX_SENT_RANGES);
    expect(state.floorSeq).toBe(199 - MAX_SENT_RANGES);
    const replay = { gap: null, events: [] };
    expect(planReplay(state, { filter: ALL, since: 0, journal: journal(199), replay })).toEqual({
      ok: false,
      floorSeq: state.floorSeq,
    });
    expect(
      planReplay(state, { filter: ALL, since: state.floorSeq, journal: journal(199), replay }),
    ).toMatchObject({
      ok: true,
    });
  });

  it("merges back-and-forth over the same filter without growing", () => {
    const { state } = toggle(initialDelivery(0), [
      [BTC, 0],
      [BTC, 5],
      [ALL, 10],
      [BTC, 10],
      [ALL, 20],
    ]);
    // the BTC range (0, 20] is inside nothing else; ALL is live from 20
    expect(state.ranges).toEqual([{ fromSeq: 0, toSeq: 20, filter: BTC }]);
    expect(state.liveFromSeq).toBe(20);
  });
});
