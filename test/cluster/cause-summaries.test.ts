// Which members' cause summaries count: the other live members' (each of the process holding the lease) while fresh,
// and a member's that left the view for a while after (its targets wait for adoption).
import { describe, expect, it } from "vitest";
import type { CauseSummary } from "../../src/domain/cause-summary.js";
import {
  DEAD_HOLD_MS,
  STALE_MS,
  countingSummaries,
  type HeldRecord,
} from "../../src/cluster/cause-summaries.js";

const summary = (pair: string): CauseSummary => ({
  failing: [],
  held: [],
  unpolled: [],
  unjudged: {},
  pairs: [pair],
  children: [],
});
const held = (memberId: string, incarnation: string, pair: string, storedAtMs = 0): HeldRecord => ({
  record: { memberId, incarnation, atMs: storedAtMs, summary: summary(pair) },
  storedAtMs,
  goneSinceMs: null,
});
const byMember = (records: readonly HeldRecord[]): Map<string, HeldRecord> =>
  new Map(records.map((r) => [r.record.memberId, r]));
const pairsOf = (summaries: readonly CauseSummary[]): string[] => summaries.map((s) => s.pairs[0] ?? "");

describe("countingSummaries", () => {
  it("counts the other live members' fresh records of their current process, in member id order", () => {
    const records = byMember([
      held("m3", "c", "C/USD"),
      held("m1", "a", "A/USD"), // this member: its own part is its engine
      held("m2", "b", "B/USD"),
      held("m4", "old", "D/USD"), // an earlier process of a live member id
    ]);
    const live = new Map([
      ["m1", "a"],
      ["m2", "b"],
      ["m3", "c"],
      ["m4", "new"],
    ]);
    expect(pairsOf(countingSummaries(records, live, "m1", 1_000))).toEqual(["B/USD", "C/USD"]);
  });

  it("a live member's record stored longer than STALE_MS ago stops counting (its writes fail, or the bucket lost it)", () => {
    const records = byMember([held("m2", "b", "B/USD", 0)]);
    const live = new Map([["m2", "b"]]);
    expect(pairsOf(countingSummaries(records, live, "m1", STALE_MS))).toEqual(["B/USD"]);
    expect(pairsOf(countingSummaries(records, live, "m1", STALE_MS + 1))).toEqual([]);
  });

  it("a member that left the view counts, after the live ones, for DEAD_HOLD_MS after it left (kill -9)", () => {
    const records = byMember([held("m0", "z", "Z/USD", 1_000), held("m2", "b", "B/USD", 1_000)]);
    const live = new Map([["m2", "b"]]);
    const leftMs = 5_000;
    expect(pairsOf(countingSummaries(records, live, "m1", leftMs))).toEqual(["B/USD", "Z/USD"]);
    expect(pairsOf(countingSummaries(records, live, "m1", leftMs + DEAD_HOLD_MS))).toEqual(["Z/USD"]);
    expect(pairsOf(countingSummaries(records, live, "m1", leftMs + DEAD_HOLD_MS + 1))).toEqual([]);
  });

  it("a record that was stale when its member left does not count (a member long gone)", () => {
    const records = byMember([held("m0", "z", "Z/USD", 0)]);
    expect(countingSummaries(records, new Map(), "m1", STALE_MS + 1)).toEqual([]);
  });
});
