// Which members' cause summaries count: the other live members' (each of the process holding the lease) while fresh,
// and a member's that left the view for a while after (its targets wait for adoption).
import type { KV } from "@nats-io/kv";
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import type { CauseSummary } from "../../src/domain/cause-summary.js";
import { createMonitorState, retainTargets, type MonitorState } from "../../src/domain/monitor.js";
import type { ClusterStatus } from "../../src/cluster/member.js";
import type { EventSource } from "../../src/pipeline/event-hub.js";
import { NEVER } from "rxjs";
import type { MonitorRunner } from "../../src/pipeline/monitor-runner.js";
import {
  DEAD_HOLD_MS,
  STALE_MS,
  countingSummaries,
  createCauseSummaries,
  type CauseRecord,
  type HeldRecord,
} from "../../src/cluster/cause-summaries.js";
import { BTC_OFF, rule } from "../domain/helpers.js";

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

/** A member's bucket in memory: one stored record of `m2`, delivered by the watch when `deliver` is called. */
function fakeBucket(stored: CauseRecord) {
  const puts: string[] = [];
  const deletes: string[] = [];
  let deliver: () => void = () => undefined;
  const entry = {
    key: `causes.${stored.memberId}`,
    operation: "PUT",
    created: new Date(stored.atMs),
    isUpdate: true,
    string: () => JSON.stringify(stored),
  };
  const kv = {
    status: () => Promise.resolve({ values: 1 }),
    put: (key: string) => Promise.resolve(void puts.push(key)),
    delete: (key: string) => Promise.resolve(void deletes.push(key)),
    watch: () => {
      const delivered = new Promise<void>((resolve) => (deliver = resolve));
      let done = false;
      return Promise.resolve({
        stop: () => undefined,
        async *[Symbol.asyncIterator]() {
          await delivered;
          if (!done) yield entry;
          done = true;
          await new Promise(() => undefined); // watching on
        },
      });
    },
  };
  // the watch and KV surface cause-summaries uses, nothing more
  return { kv: kv as unknown as KV, puts, deletes, deliver: () => deliver() };
}

describe("createCauseSummaries", () => {
  const nowMs = 1_000_000;
  const rules = [rule("upstream_down", { minFraction: 0, windowMs: 5_000 }, { threshold: 2 })];
  const stateOf = (count: number): MonitorState => {
    const specs = Array.from({ length: count }, (_, i) => ({
      ...BTC_OFF,
      id: `offchain:${"P".repeat(60)}${i}/USD`,
      pair: `P${i}/USD`,
    }));
    return retainTargets(createMonitorState(), new Set(specs.map((s) => s.id)), rules, nowMs, specs).state;
  };

  async function run(state: MonitorState) {
    const peer: CauseRecord = { memberId: "m2", incarnation: "b", atMs: nowMs, summary: summary("B/USD") };
    const bucket = fakeBucket(peer);
    const calls: { peers: number; ready: boolean }[] = [];
    const runner = {
      state: () => state,
      clusterCauses: (
        peers: { held: ReadonlySet<string>; pairs: ReadonlySet<string> },
        _f: unknown,
        ready: boolean,
      ) => calls.push({ peers: peers.pairs.size, ready }),
    } as unknown as MonitorRunner; // the two calls the summaries make
    const members = [
      { memberId: "m1", incarnation: "a" },
      { memberId: "m2", incarnation: "b" },
    ];
    const summaries = createCauseSummaries({
      bucket: () => bucket.kv,
      memberId: "m1",
      incarnation: "a",
      member: { status: () => ({ members }) as unknown as ClusterStatus, leaseValid: () => true },
      runner: () => runner,
      logger: pino({ level: "silent" }),
      nowMs: () => nowMs,
    });
    // the log's two members the summaries read: its events and the firing alerts
    const log = { events$: NEVER, activeAlerts: () => [] } as unknown as EventSource;
    summaries.start(log, 60_000);
    await vi.waitFor(() => expect(calls.length).toBeGreaterThan(0));
    return { bucket, calls, summaries };
  }

  it("hands the runner its peers as not ready until the watch delivered the stored records", async () => {
    const { bucket, calls, summaries } = await run(stateOf(3));
    expect(calls.at(-1)).toEqual({ peers: 0, ready: false });
    bucket.deliver();
    await vi.waitFor(() => expect(calls.at(-1)).toEqual({ peers: 1, ready: true }));
    expect(bucket.puts).toEqual(["causes.m1"]);
    await summaries.stop();
  });

  it("deletes its record when its summary is too large to share: the others do not judge with an old one", async () => {
    const { bucket, summaries } = await run(stateOf(5_000));
    await vi.waitFor(() => expect(bucket.deletes).toEqual(["causes.m1"]));
    expect(bucket.puts).toEqual([]);
    await summaries.stop();
  });
});
