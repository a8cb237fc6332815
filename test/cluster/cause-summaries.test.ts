// Which members' cause summaries count: the other live members' (each of the process holding the lease) while fresh
// and written under the same cause configuration, and a member's that left the view for a while after (its targets
// wait for adoption); the server's clock read as this member's; and the summaries' shell over a bucket in memory.
import type { KV } from "@nats-io/kv";
import { pino } from "pino";
import type { Logger } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryKv } from "../../bench/lib/memory-kv.js";
import { NO_PEERS, type CauseSummary, type PeerCauses } from "../../src/domain/cause-summary.js";
import {
  causeConfigHashOf,
  createMonitorState,
  observe,
  retainTargets,
  setClusterCauses,
  type MonitorState,
} from "../../src/domain/monitor.js";
import type { ClusterStatus } from "../../src/cluster/member.js";
import type { EventSource } from "../../src/pipeline/event-hub.js";
import { NEVER } from "rxjs";
import type { MonitorRunner } from "../../src/pipeline/monitor-runner.js";
import {
  DEAD_HOLD_MS,
  MISMATCH_HOLD_MS,
  OFFSET_SAMPLE_MAX_DELAY_MS,
  REFRESH_MS,
  STALE_MS,
  countingRecords,
  offsetSample,
  serverOffsetMs,
  withOffsetSample,
  type CauseRecord,
  type HeldRecord,
} from "../../src/cluster/cause-records.js";
import { createCauseSummaries } from "../../src/cluster/cause-summaries.js";
import { BTC_OFF, T0, obs, pairPrice, rule } from "../domain/helpers.js";
import { waitFor } from "../wait-for.js";

const HASH = "0123456789abcdef";
const summary = (pair: string): CauseSummary => ({
  failing: [],
  held: [],
  unpolled: [],
  unjudged: {},
  pairs: [pair],
  children: [],
});
const held = (
  memberId: string,
  incarnation: string,
  pair: string,
  createdMs = 0,
  configHash: string | null = HASH,
): HeldRecord => ({
  record: {
    memberId,
    incarnation,
    atMs: createdMs,
    configHash: configHash ?? undefined,
    summary: summary(pair),
  },
  createdMs,
  goneSinceMs: null,
});
const byMember = (records: readonly HeldRecord[]): Map<string, HeldRecord> =>
  new Map(records.map((r) => [r.record.memberId, r]));
const pairsOf = (records: readonly CauseRecord[]): string[] => records.map((r) => r.summary.pairs[0] ?? "");
/** The records counting for m1 at `nowMs` (its hash HASH, its clock `offsetMs` ahead of the server's). */
const countingSummaries = (
  records: ReadonlyMap<string, HeldRecord>,
  live: ReadonlyMap<string, string>,
  selfId: string,
  nowMs: number,
  offsetMs = 0,
): CauseRecord[] => [
  ...countingRecords(records, { live, selfId, nowMs, configHash: HASH, offsetMs }).records,
];

describe("countingRecords", () => {
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

  it("leaves out a record written under another cause configuration, or with none (an older version), and names them", () => {
    const records = byMember([
      held("m2", "b", "B/USD"),
      held("m3", "c", "C/USD", 0, "fedcba9876543210"), // a rolling reload: m3 runs other cause rules
      held("m4", "d", "D/USD", 0, null), // an older version: no hash
      held("m5", "e", "E/USD", -STALE_MS - 1, "fedcba9876543210"), // stale anyway: no count, no mismatch
    ]);
    const live = new Map([
      ["m2", "b"],
      ["m3", "c"],
      ["m4", "d"],
      ["m5", "e"],
    ]);
    const view = { live, selfId: "m1", nowMs: 0, configHash: HASH, offsetMs: 0 };
    const counting = countingRecords(records, view);
    expect(pairsOf(counting.records)).toEqual(["B/USD"]);
    expect([...counting.mismatched]).toEqual([
      ["m3", "fedcba9876543210"],
      ["m4", null],
    ]);
    // once both run the same rules, it counts
    expect(pairsOf(countingRecords(records, { ...view, configHash: "fedcba9876543210" }).records)).toEqual([
      "C/USD",
    ]);
  });

  it("reads the server's store time on this member's clock: a member 20 s behind NATS still counts fresh records", () => {
    // this member's clock is 20 s behind the server's: a record NATS stored just now carries createdMs = now + 20 s
    const skewMs = -20_000;
    const nowMs = 100_000;
    const records = byMember([held("m2", "b", "B/USD", nowMs - skewMs)]);
    const live = new Map([["m2", "b"]]);
    expect(pairsOf(countingSummaries(records, live, "m1", nowMs, skewMs))).toEqual(["B/USD"]);
    expect(pairsOf(countingSummaries(records, live, "m1", nowMs + STALE_MS, skewMs))).toEqual(["B/USD"]);
    expect(pairsOf(countingSummaries(records, live, "m1", nowMs + STALE_MS + 1, skewMs))).toEqual([]);
    // a member 20 s ahead: without the offset a record stored 15 s ago would look 35 s old and stop counting
    const ahead = byMember([held("m2", "b", "B/USD", nowMs - 20_000 - 15_000)]);
    expect(pairsOf(countingSummaries(ahead, live, "m1", nowMs, 20_000))).toEqual(["B/USD"]);
    expect(pairsOf(countingSummaries(ahead, live, "m1", nowMs, 0))).toEqual([]);
  });
});

describe("the server's clock offset", () => {
  it("samples this member's own records as they arrive (arrival − store time), not a record delivered again later", () => {
    // written at 1 000 (this member's clock), stored at 31 000 (the server's, 30 s ahead), arrived at 1 005
    expect(offsetSample(1_000, 31_000, 1_005)).toBe(-29_995);
    expect(offsetSample(1_000, 31_000, 1_000 + OFFSET_SAMPLE_MAX_DELAY_MS)).toBe(
      1_000 + OFFSET_SAMPLE_MAX_DELAY_MS - 31_000,
    );
    expect(offsetSample(1_000, 31_000, 1_001 + OFFSET_SAMPLE_MAX_DELAY_MS)).toBeNull();
  });

  it("is the smallest of the latest samples (a sample is the offset plus a delivery delay), 0 before any", () => {
    expect(serverOffsetMs([])).toBe(0);
    let samples: readonly number[] = [];
    for (const sample of [-29_990, -29_999, -29_950, -29_960]) samples = withOffsetSample(samples, sample);
    expect(serverOffsetMs(samples)).toBe(-29_999);
    // the clock stepped: once the older samples have left the window, the new offset holds
    for (const sample of [5, 7, 6, 9]) samples = withOffsetSample(samples, sample);
    expect(serverOffsetMs(samples)).toBe(5);
    // a rise (NTP stepped this clock forward, or a server behind it leads now) is followed after two samples
    samples = withOffsetSample(samples, 3_004);
    expect(serverOffsetMs(samples)).toBeLessThan(10);
    samples = withOffsetSample(samples, 3_002);
    expect(serverOffsetMs(samples)).toBe(3_002);
    // a delivery delay within OFFSET_JUMP_MS is no rise
    for (const sample of [3_500, 3_900]) samples = withOffsetSample(samples, sample);
    expect(serverOffsetMs(samples)).toBe(3_002);
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
    const configHash = causeConfigHashOf(state);
    const peer: CauseRecord = {
      memberId: "m2",
      incarnation: "b",
      atMs: nowMs,
      configHash,
      summary: summary("B/USD"),
    };
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
      excluded: () => undefined,
    });
    // the log's two members the summaries read: its events and the firing alerts
    const log = { events$: NEVER, activeAlerts: () => [] } as unknown as EventSource;
    summaries.start(log, 60_000);
    await waitFor(() => expect(calls.length).toBeGreaterThan(0));
    return { bucket, calls, summaries };
  }

  it("hands the runner its peers as not ready until the watch delivered the stored records", async () => {
    const { bucket, calls, summaries } = await run(stateOf(3));
    expect(calls.at(-1)).toEqual({ peers: 0, ready: false });
    bucket.deliver();
    await waitFor(() => expect(calls.at(-1)).toEqual({ peers: 1, ready: true }));
    expect(bucket.puts).toEqual(["causes.m1"]);
    await summaries.stop();
  });

  it("deletes its record when its summary is too large to share: the others do not judge with an old one", async () => {
    const { bucket, summaries } = await run(stateOf(5_000));
    await waitFor(() => expect(bucket.deletes).toEqual(["causes.m1"]));
    expect(bucket.puts).toEqual([]);
    await summaries.stop();
  });
});

/** Three members' view, a runner over `state` keeping what the summaries hand it, and m1's summaries over `buckets`. */
function member(state: () => MonitorState, buckets: () => MemoryKv, clock: { nowMs: number }) {
  const handed: PeerCauses[] = [];
  const readies: boolean[] = [];
  const warnings: string[] = [];
  const excluded: string[] = [];
  const runner = {
    state,
    clusterCauses: (peers: PeerCauses, _firing: unknown, ready: boolean) => {
      handed.push(peers);
      readies.push(ready);
    },
  } as unknown as MonitorRunner; // the two calls the summaries make
  const members = ["m1", "m2", "m3"].map((memberId) => ({ memberId, incarnation: memberId }));
  const logger = {
    warn: (_fields: unknown, message: string) => warnings.push(message),
    error: (_fields: unknown, message: string) => warnings.push(message),
  } as unknown as Logger; // the two levels the summaries log at
  const summaries = createCauseSummaries({
    bucket: () => buckets() as unknown as KV, // the KV surface the summaries use (put, delete, status, watch)
    memberId: "m1",
    incarnation: "m1",
    member: { status: () => ({ members }) as unknown as ClusterStatus, leaseValid: () => true },
    runner: () => runner,
    logger,
    nowMs: () => clock.nowMs,
    excluded: (reason) => excluded.push(reason),
  });
  const log = { events$: NEVER, activeAlerts: () => [] } as unknown as EventSource;
  return { summaries, handed, readies, warnings, excluded, start: () => summaries.start(log, 1_000) };
}

/** A peer's record as it writes it. */
const peerRecord = (
  memberId: string,
  configHash: string | undefined,
  pair: string,
  atMs: number,
): Uint8Array =>
  new TextEncoder().encode(
    JSON.stringify({ memberId, incarnation: memberId, atMs, configHash, summary: summary(pair) }),
  );

describe("createCauseSummaries over a bucket in memory", () => {
  const T = 1_000_000;
  const rules = [rule("upstream_down", { minFraction: 0, windowMs: 5_000 }, { threshold: 2 })];
  const specs = [BTC_OFF];
  const stateOf = (): MonitorState =>
    retainTargets(createMonitorState(), new Set(specs.map((s) => s.id)), rules, T, specs).state;

  afterEach(() => {
    vi.useRealTimers();
  });

  it("stops the previous watch when it watches a new bucket (a reconnect), and reads the new one", async () => {
    vi.useFakeTimers();
    const clock = { nowMs: T };
    const first = new MemoryKv(() => clock.nowMs);
    const second = new MemoryKv(() => clock.nowMs);
    let bucket = first;
    const state = stateOf();
    const m1 = member(
      () => state,
      () => bucket,
      clock,
    );
    m1.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(first.watching).toBe(1);
    bucket = second;
    await second.put("causes.m2", peerRecord("m2", causeConfigHashOf(state), "B/USD", clock.nowMs));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(first.watching).toBe(0);
    expect(second.watching).toBe(1);
    expect([...(m1.handed.at(-1)?.pairs ?? [])]).toEqual(["B/USD"]);
    await m1.summaries.stop();
    expect(second.watching).toBe(0);
  });

  it("leaves out a peer's record of other cause rules, logged and counted once a streak, and merges the peers once per change", async () => {
    vi.useFakeTimers();
    const clock = { nowMs: T };
    const kv = new MemoryKv(() => clock.nowMs);
    const state = stateOf();
    const ours = causeConfigHashOf(state);
    const m1 = member(
      () => state,
      () => kv,
      clock,
    );
    await kv.put("causes.m2", peerRecord("m2", "fedcba9876543210", "B/USD", clock.nowMs));
    await kv.put("causes.m3", peerRecord("m3", ours, "C/USD", clock.nowMs));
    m1.start();
    for (let s = 0; s < 3; s++) {
      clock.nowMs += 1_000;
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect([...(m1.handed.at(-1)?.pairs ?? [])]).toEqual(["C/USD"]);
    expect(m1.excluded).toEqual(["config"]);
    expect(m1.warnings.filter((w) => w.includes("other cause rules"))).toHaveLength(1);
    // nothing changed since: the same union, not merged again
    const peers = m1.handed.at(-1);
    expect(m1.handed.slice(-3).every((handed) => handed === peers)).toBe(true);
    // m2 reloads: it counts; then an older version's record (no hash): left out again, a new streak
    await kv.put("causes.m2", peerRecord("m2", ours, "B/USD", clock.nowMs));
    await vi.advanceTimersByTimeAsync(1_000);
    expect([...(m1.handed.at(-1)?.pairs ?? [])].sort()).toEqual(["B/USD", "C/USD"]);
    await kv.put("causes.m2", peerRecord("m2", undefined, "B/USD", clock.nowMs));
    await vi.advanceTimersByTimeAsync(1_000);
    expect([...(m1.handed.at(-1)?.pairs ?? [])]).toEqual(["C/USD"]);
    expect(m1.excluded).toEqual(["config", "no_hash"]);
    await m1.summaries.stop();
  });

  it("steps no parent while a peer runs other cause rules (a rolling reload), for at most MISMATCH_HOLD_MS", async () => {
    vi.useFakeTimers();
    const clock = { nowMs: T };
    const kv = new MemoryKv(() => clock.nowMs);
    const state = stateOf();
    // m1 judges (it owns the cause: key)
    setClusterCauses(state, { judges: true, ready: true, peers: NO_PEERS, firing: new Set() });
    const ours = causeConfigHashOf(state);
    const m1 = member(
      () => state,
      () => kv,
      clock,
    );
    let peerHash = ours;
    const step = async (ms: number): Promise<void> => {
      for (let s = 0; s < ms / 1_000; s++) {
        clock.nowMs += 1_000;
        // the peer keeps its record fresh, as a live member does
        await kv.put("causes.m2", peerRecord("m2", peerHash, "B/USD", clock.nowMs));
        await vi.advanceTimersByTimeAsync(1_000);
      }
    };
    m1.start();
    await step(3_000);
    expect(m1.readies.at(-1)).toBe(true);
    // m2 reloads first: m1 judges nothing (not a part of the cluster) until both run the same rules
    peerHash = "fedcba9876543210";
    await step(3_000);
    expect(m1.readies.at(-1)).toBe(false);
    peerHash = ours;
    await step(2_000);
    expect(m1.readies.at(-1)).toBe(true);
    // a member that keeps other rules is judged without after MISMATCH_HOLD_MS, said once
    peerHash = "fedcba9876543210";
    await step(MISMATCH_HOLD_MS);
    expect(m1.readies.at(-1)).toBe(false);
    await step(2_000);
    expect(m1.readies.at(-1)).toBe(true);
    await step(5_000);
    expect(m1.readies.slice(-5).every((ready) => ready)).toBe(true);
    expect(m1.warnings.filter((w) => w.includes("judge without their part"))).toHaveLength(1);
    await m1.summaries.stop();
  });

  it("steps no parent while NATS is away (no bucket): its peers' records cannot be read", async () => {
    vi.useFakeTimers();
    const clock = { nowMs: T };
    const kv = new MemoryKv(() => clock.nowMs);
    let bucket: MemoryKv | undefined = kv;
    const state = stateOf();
    const m1 = member(
      () => state,
      () => bucket as MemoryKv, // undefined: NATS is away
      clock,
    );
    m1.start();
    await kv.put("causes.m2", peerRecord("m2", causeConfigHashOf(state), "B/USD", clock.nowMs));
    for (let s = 0; s < 2; s++) {
      clock.nowMs += 1_000;
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect(m1.readies.at(-1)).toBe(true);
    bucket = undefined;
    clock.nowMs += 1_000;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(m1.readies.at(-1)).toBe(false);
    await m1.summaries.stop();
  });

  it("shares a child's new value with the next write, its new direction at once", async () => {
    vi.useFakeTimers();
    const clock = { nowMs: T0 };
    const kv = new MemoryKv(() => clock.nowMs);
    const priceRules = [
      rule(
        "price_change",
        { windowMs: 10_000, market: "offchain" },
        { threshold: 0.02, clearThreshold: 0.015 },
      ),
      rule("market_move", { minFraction: 0, windowMs: 60_000 }, { threshold: 3, clearThreshold: 1 }),
    ];
    let state = retainTargets(createMonitorState(), new Set([BTC_OFF.id]), priceRules, T0, [BTC_OFF]).state;
    const poll = (price: string): void => {
      clock.nowMs += 1_000;
      state = observe(
        state,
        obs.off(pairPrice(price, clock.nowMs), clock.nowMs),
        priceRules,
        clock.nowMs,
      ).state;
    };
    const m1 = member(
      () => state,
      () => kv,
      clock,
    );
    m1.start();
    await vi.advanceTimersByTimeAsync(0);
    for (let s = 0; s <= 10; s++) poll("100"); // the window's reference
    poll("106"); // price_change fires: +6 %
    await vi.advanceTimersByTimeAsync(1_000);
    const writes = (): number => kv.writes;
    const afterFiring = writes();
    poll("108"); // +8 %: the same direction
    await vi.advanceTimersByTimeAsync(1_000);
    poll("107");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(writes()).toBe(afterFiring);
    poll("93"); // −7 %: the other direction, shared at once
    await vi.advanceTimersByTimeAsync(1_000);
    expect(writes()).toBe(afterFiring + 1);
    poll("92");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(writes()).toBe(afterFiring + 1);
    // the refresh carries the value as it is
    clock.nowMs += REFRESH_MS;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(writes()).toBe(afterFiring + 2);
    await m1.summaries.stop();
  });
});
