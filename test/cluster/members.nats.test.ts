// Cluster mode with real processes: nats-server, a simulator, three daemons each behind a counting proxy.
// Every target is polled by exactly one member; a kill -9 hands its targets over within lease + period;
// a member stopped past its lease (SIGSTOP) polls nothing it lost when it resumes.
import { afterEach, describe, expect, it } from "vitest";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import { type RunningDaemon } from "../e2e/daemon.js";
import { startClusterMember } from "./member-config.js";
import { natsServerAvailable } from "./nats.js";
import { useNatsSuite } from "./suite.js";
import { sleep } from "./wait.js";
import type { CountingProxy } from "./proxy.js";

const PAIRS = syntheticPairIds(60);
const LEASE_MS = 3_000;
const PERIOD_MS = 1_000;
/** A member renews on a tick of min(1 s, lease/4) and adopts what it takes over from KV; the machine is loaded: one more second of slack. */
const SLACK_MS = Math.min(1_000, LEASE_MS / 4) + 1_000;

const available = natsServerAvailable();

interface Member {
  readonly id: string;
  readonly proxy: CountingProxy;
  readonly daemon: RunningDaemon;
}

/** pair → ids of the members that requested it at or after `sinceMs`. */
function pollersSince(members: readonly Member[], sinceMs: number): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const member of members)
    for (const request of member.proxy.requests)
      if (request.atMs >= sinceMs) {
        const set = out.get(request.pair) ?? new Set<string>();
        set.add(member.id);
        out.set(request.pair, set);
      }
  return out;
}

/** Wait until, over the last `windowMs`, every pair was polled by exactly one of `members`, and each member polled some. */
async function waitExclusive(members: readonly Member[], windowMs: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pollers = pollersSince(members, Date.now() - windowMs);
    const exclusive = PAIRS.every((pair) => pollers.get(pair)?.size === 1);
    const shared = members.every((member) => [...pollers.values()].some((set) => set.has(member.id)));
    if (exclusive && shared) return;
    if (Date.now() > deadline) {
      const bad = PAIRS.filter((pair) => pollers.get(pair)?.size !== 1).map(
        (pair) => `${pair}:${[...(pollers.get(pair) ?? [])].join("+") || "none"}`,
      );
      throw new Error(`not exactly one poller per pair after ${timeoutMs} ms: ${bad.join(", ")}`);
    }
    await sleep(250);
  }
}

describe.skipIf(!available)("cluster members (nats-server, 3 daemons, 60 targets)", () => {
  const suite = useNatsSuite({ simulator: { seed: 7, syntheticPairs: 60 } });
  afterEach(async () => {
    await Promise.all(suite.proxies.splice(0).map((proxy) => proxy.close()));
  });

  /** Start a member with its own work dir and proxy. */
  async function startMember(id: string): Promise<Member> {
    const { proxy, daemon } = await startClusterMember(suite.simulatorUrl, suite.proxies, {
      id,
      natsUrls: suite.nats.urls,
      pairs: PAIRS,
      periodMs: PERIOD_MS,
      leaseMs: LEASE_MS,
      rules: [{ kind: "upstream_error", threshold: 3 }],
    });
    return { id, proxy, daemon };
  }

  it("polls every target from exactly one member, hands a killed member's targets over within lease + period, and fences a stopped one", async () => {
    const members = [await startMember("m1"), await startMember("m2"), await startMember("m3")];
    const [m1, m2, m3] = members as [Member, Member, Member];
    await waitExclusive(members, 2_500, 30_000);
    // a clean window, once settled: no pair polled twice, none skipped, and each member has a share
    await sleep(3_000);
    const settled = pollersSince(members, Date.now() - 3_000);
    expect(PAIRS.filter((pair) => settled.get(pair)?.size !== 1)).toEqual([]);
    for (const member of members)
      expect([...settled.values()].filter((set) => set.has(member.id)).length).toBeGreaterThan(5);

    // kill -9 m1: its pairs are polled by the others within lease + period (+ one membership scan)
    const lost = PAIRS.filter((pair) => settled.get(pair)?.has("m1"));
    const killedAtMs = Date.now();
    m1.daemon.signal("SIGKILL");
    const takenAtMs = new Map<string, number>();
    while (takenAtMs.size < lost.length && Date.now() - killedAtMs < 30_000) {
      for (const member of [m2, m3])
        for (const request of member.proxy.requests)
          if (request.atMs >= killedAtMs && lost.includes(request.pair) && !takenAtMs.has(request.pair))
            takenAtMs.set(request.pair, request.atMs);
      await sleep(100);
    }
    const failoverMs = [...takenAtMs.values()].map((atMs) => atMs - killedAtMs).sort((a, b) => a - b);
    console.info(
      `cluster failover of ${lost.length} targets after kill -9: first ${failoverMs[0]} ms, max ${failoverMs.at(-1)} ms (lease ${LEASE_MS} ms, period ${PERIOD_MS} ms)`,
    );
    expect(takenAtMs.size).toBe(lost.length);
    expect(failoverMs.at(-1)).toBeLessThanOrEqual(LEASE_MS + PERIOD_MS + SLACK_MS);
    await waitExclusive([m2, m3], 2_500, 15_000);

    // SIGSTOP m2 past its lease: m3 takes everything; after SIGCONT m2 polls nothing m3 still polls
    m2.daemon.signal("SIGSTOP");
    await sleep(2 * LEASE_MS);
    await waitExclusive([m3], 2_000, 10_000);
    const continuedAtMs = Date.now();
    m2.daemon.signal("SIGCONT");
    await sleep(LEASE_MS + 3_000);
    await waitExclusive([m2, m3], 2_000, 15_000);
    const m2After = m2.proxy.requests.filter((r) => r.atMs >= continuedAtMs);
    const m3After = m3.proxy.requests.filter((r) => r.atMs >= continuedAtMs);
    // nothing right after it woke up (its lease had expired: the fence refuses before any poll goes out)
    expect(m2After.filter((r) => r.atMs < continuedAtMs + 1_000)).toEqual([]);
    // what it took back, it took only after m3 had let go: no pair polled by both at once
    const overlapping = PAIRS.filter((pair) => {
      const firstByM2 = Math.min(...m2After.filter((r) => r.pair === pair).map((r) => r.atMs));
      const lastByM3 = Math.max(...m3After.filter((r) => r.pair === pair).map((r) => r.atMs));
      return Number.isFinite(firstByM2) && lastByM3 > firstByM2;
    });
    expect(overlapping).toEqual([]);
    expect(new Set(m2After.map((r) => r.pair)).size).toBeGreaterThan(5);
  });
});
