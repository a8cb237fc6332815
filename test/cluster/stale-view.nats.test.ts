// A member whose membership reads are slow (a throttled view) while two members join: no target is polled by
// two members at once, and none is left unpolled for longer than the documented bound (about two leases).
import { pino } from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { openLeaseStore, type LeaseChange, type LeaseStore } from "../../src/cluster/lease-store.js";
import { createClusterMember, type ClusterMember } from "../../src/cluster/member.js";
import { createClusterMetrics } from "../../src/cluster/metrics.js";
import { natsServerAvailable } from "./nats.js";
import { useNatsSuite } from "./suite.js";

const LEASE_MS = 3_000;
const RENEW_INTERVAL_MS = LEASE_MS / 3;
const TICK_MS = Math.min(1_000, LEASE_MS / 4);
const POLL_PERIOD_MS = 200;
/** How old a view may be for a member to act on it (member.ts): a renew interval plus half a scan. */
const VIEW_LIMIT_MS = RENEW_INTERVAL_MS + TICK_MS / 2;
/** How late each watched membership change arrives while throttled (longer than a lease). */
const THROTTLE_MS = 4_000;
const KEYS = Array.from({ length: 30 }, (_, i) => `PAIR${i}/USD`);
const available = natsServerAvailable();

/** One poll of one key by one member, as the (shared, in-process) upstream saw it. */
interface Poll {
  readonly memberId: string;
  readonly key: string;
  readonly atMs: number;
}

/** A member with a poller that polls every owned key each period, fenced by its lease like the daemon's client. */
interface PollingMember {
  readonly member: ClusterMember;
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadlineMs = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadlineMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** The store with each watched change delivered `THROTTLE_MS` late, in order, while `throttled()` (a slow NATS). */
function throttledStore(store: LeaseStore, throttled: () => boolean): LeaseStore {
  return Object.assign(Object.create(store) as LeaseStore, {
    async watch(onChange: (change: LeaseChange) => void) {
      return store.watch((change) => {
        if (throttled()) setTimeout(() => onChange(change), THROTTLE_MS);
        else onChange(change);
      });
    },
  });
}

/** Per key, the members in the order they polled it, consecutive repeats collapsed (A,A,B,B → A,B). */
function pollerRuns(polls: readonly Poll[]): Map<string, string[]> {
  const runs = new Map<string, string[]>();
  for (const poll of [...polls].sort((a, b) => a.atMs - b.atMs)) {
    const run = runs.get(poll.key) ?? [];
    if (run.at(-1) !== poll.memberId) run.push(poll.memberId);
    runs.set(poll.key, run);
  }
  return runs;
}

/** The longest time any key went unpolled between `fromMs` and `toMs`. */
function longestGapMs(polls: readonly Poll[], fromMs: number, toMs: number): number {
  let longest = 0;
  for (const key of KEYS) {
    const times = polls.filter((p) => p.key === key && p.atMs >= fromMs).map((p) => p.atMs);
    const edges = [fromMs, ...times.sort((a, b) => a - b), toMs];
    for (let i = 1; i < edges.length; i += 1)
      longest = Math.max(longest, (edges[i] ?? 0) - (edges[i - 1] ?? 0));
  }
  return longest;
}

describe.skipIf(!available)(
  "a member with a throttled membership view while others join (nats-server)",
  () => {
    const suite = useNatsSuite();
    const polls: Poll[] = [];
    let throttled = false;

    /** Start member `id`; its membership reads are throttled while `throttle` says so. */
    function startMember(id: string, throttle: () => boolean): PollingMember {
      const config = {
        nats: { servers: suite.nats.urls, user: "", password: "", token: "", replicas: 1 },
        memberId: id,
        leaseMs: LEASE_MS,
        historyCheckpointMs: 0,
        experimental: true,
      };
      const member = createClusterMember({
        config,
        memberId: id,
        incarnation: `${id}-1`,
        nowMs: Date.now,
        logger: pino({ level: "silent" }),
        metrics: createClusterMetrics(new Registry()),
        keys: () => KEYS,
        targetCount: (keys) => keys.size,
        onOwnership: () => undefined,
        openStore: async () =>
          throttledStore(await openLeaseStore(config.nats, { name: id, timeoutMs: LEASE_MS / 4 }), throttle),
      });
      const poller = setInterval(() => {
        const atMs = Date.now();
        for (const key of member.ownedKeys())
          if (member.leaseValid()) polls.push({ memberId: id, key, atMs });
      }, POLL_PERIOD_MS);
      member.start();
      const polling = {
        member,
        async stop() {
          clearInterval(poller);
          await member.stop();
        },
      };
      suite.closeAtEnd({ close: () => polling.stop() });
      return polling;
    }

    it("stops polling what it cannot confirm, stands by, and the joiners take every key once", async () => {
      const old = startMember("old", () => throttled);
      await waitFor(
        "the first member to own every key",
        () => old.member.ownedKeys().size === KEYS.length,
        15_000,
      );
      await sleep(1_000);
      throttled = true;
      const joinedAtMs = Date.now();
      const joiner = startMember("j1", () => false);
      startMember("j2", () => false);
      await sleep(4 * LEASE_MS);
      const endMs = Date.now();

      // each key moved at most once (old → a joiner), never back and forth: no two members polled it at once
      const runs = pollerRuns(polls.filter((p) => p.atMs >= joinedAtMs - 1_000));
      const shared = [...runs].filter(([, run]) => run.length > 2 || (run.length === 2 && run[0] !== "old"));
      expect(shared).toEqual([]);
      // what the slow member still polled, it polled before the joiners' handover wait ended
      const lastByOldMs = Math.max(...polls.filter((p) => p.memberId === "old").map((p) => p.atMs));
      expect(lastByOldMs).toBeLessThan(joinedAtMs + RENEW_INTERVAL_MS + TICK_MS);
      // the slow member stood by (its record says standby): the joiners poll every key
      const lastRound = polls.filter((p) => p.atMs >= endMs - 2 * POLL_PERIOD_MS);
      expect(new Set(lastRound.map((p) => p.key)).size).toBe(KEYS.length);
      expect(lastRound.filter((p) => p.memberId === "old")).toEqual([]);
      expect(old.member.leaseValid()).toBe(true); // it renews, as a standby
      expect(old.member.status().standby).toBe(true);
      expect(old.member.status().error).toMatch(/standing by/);
      // what /api/v1/status shows: the joiner is a member and lists the slow one as standing by
      const seenByJoiner = joiner.member.status();
      expect(seenByJoiner.standby).toBe(false);
      expect(seenByJoiner.members.map(({ memberId, standby }) => ({ memberId, standby }))).toEqual([
        { memberId: "j1", standby: false },
        { memberId: "j2", standby: false },
        { memberId: "old", standby: true },
      ]);
      // no key waited longer than the bound: it stopped polling once its view was older than the limit, stood by
      // a lease after its last current view (at its next tick), and the others took its keys as soon as they saw
      // that renewal (plus a poll period, and a second of slack for the loaded machine)
      const gapMs = longestGapMs(polls, joinedAtMs, endMs);
      console.info(
        `longest unpolled gap of a key with a throttled member: ${gapMs} ms (lease ${LEASE_MS} ms)`,
      );
      const boundMs = 2 * LEASE_MS - VIEW_LIMIT_MS + TICK_MS + POLL_PERIOD_MS;
      expect(gapMs).toBeLessThanOrEqual(boundMs + 1_000);
    });
  },
);
