// Which members' cause summaries count: the other live members', each of the process holding the lease.
import { describe, expect, it } from "vitest";
import type { CauseSummary } from "../../src/domain/cause-summary.js";
import { livePeerSummaries, type CauseRecord } from "../../src/cluster/cause-summaries.js";

const summary = (pair: string): CauseSummary => ({ failing: [], judged: {}, pairs: [pair], children: [] });
const record = (memberId: string, incarnation: string, pair: string): CauseRecord => ({
  memberId,
  incarnation,
  atMs: 0,
  summary: summary(pair),
});

describe("livePeerSummaries", () => {
  it("counts the other live members' records of their current process, in member id order", () => {
    const records = [
      record("m3", "c", "C/USD"),
      record("m1", "a", "A/USD"), // this member: its own part is its engine
      record("m2", "b", "B/USD"),
      record("m4", "old", "D/USD"), // an earlier process of a live member id
      record("m5", "e", "E/USD"), // no lease: dead
    ];
    const live = new Map([
      ["m1", "a"],
      ["m2", "b"],
      ["m3", "c"],
      ["m4", "new"],
    ]);
    expect(livePeerSummaries(records, live, "m1").map((s) => s.pairs[0])).toEqual(["B/USD", "C/USD"]);
  });
});
