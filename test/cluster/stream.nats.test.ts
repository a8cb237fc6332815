// Cluster mode with the streaming transport (monitors.offchain[].transport = "stream"): each pair is streamed by
// exactly one member at a time, and a killed member's pairs move to the survivor's stream within lease + slack.
import { describe, expect, it } from "vitest";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import { startDaemon, type RunningDaemon } from "../e2e/daemon.js";
import { makeWorkDir, writeConfig } from "../e2e/fixtures.js";
import { memberConfig } from "./member-config.js";
import { natsServerAvailable } from "./nats.js";
import { useNatsSuite } from "./suite.js";
import { startStreamProxy, type StreamProxy } from "./stream-proxy.js";

const PAIRS = syntheticPairIds(12);
const LEASE_MS = 3_000;
const PERIOD_MS = 500;
const available = natsServerAvailable();

interface Member {
  readonly id: string;
  readonly proxy: StreamProxy;
  readonly daemon: RunningDaemon;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The pairs of a member's stream connections open now. */
function streamedNow(member: Member): Set<string> {
  return new Set(member.proxy.streams.filter((s) => s.closedAtMs === null).flatMap((s) => s.pairs));
}

/** Pairs in the open streams of more than one member now. */
function sharedNow(members: readonly Member[]): string[] {
  return PAIRS.filter((pair) => members.filter((m) => streamedNow(m).has(pair)).length > 1);
}

async function waitUntil(what: string, done: () => boolean, timeoutMs: number): Promise<number> {
  const startedAtMs = Date.now();
  while (!done()) {
    if (Date.now() - startedAtMs > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await sleep(100);
  }
  return Date.now() - startedAtMs;
}

describe.skipIf(!available)("cluster members with the streaming transport (nats-server, 2 daemons)", () => {
  const suite = useNatsSuite({ simulator: { seed: 7, syntheticPairs: PAIRS.length } });
  const proxies: StreamProxy[] = [];

  /** Start a member streaming every pair through its own proxy. */
  async function startMember(id: string): Promise<Member> {
    const proxy = await startStreamProxy(suite.simulatorUrl);
    proxies.push(proxy);
    const work = makeWorkDir();
    const config = memberConfig(work, {
      id,
      upstreamUrl: proxy.url,
      natsUrls: suite.nats.urls,
      pairs: PAIRS,
      periodMs: PERIOD_MS,
      leaseMs: LEASE_MS,
      rules: [{ kind: "upstream_error", threshold: 3 }],
    });
    writeConfig(work, {
      ...config,
      upstream: {
        url: proxy.url,
        transport: "stream",
        retry: { maxAttempts: 1 },
        stream: { staleIntervals: 3, recoverEvents: 3, historicalPrices: 5, maxReconnectDelayMs: 1_000 },
      },
      monitors: {
        ...(config["monitors"] as Record<string, unknown>),
        offchain: PAIRS.map((pair) => ({ pair, interval: "100ms", periodMs: PERIOD_MS })),
      },
    });
    const daemon = await startDaemon(work.configFile, {
      cwd: work.dir,
      simulatorUrl: proxy.url,
      timeoutMs: 20_000,
    });
    return { id, proxy, daemon };
  }

  it("streams each pair from exactly one member, and moves a killed member's pairs to the survivor", async () => {
    const overlaps: string[] = [];
    const members: Member[] = [];
    const sampler = setInterval(() => overlaps.push(...sharedNow(members)), 100);
    try {
      members.push(await startMember("s1"));
      await waitUntil(
        "s1 to stream every pair",
        () => streamedNow(members[0] as Member).size === PAIRS.length,
        30_000,
      );
      members.push(await startMember("s2"));
      const [s1, s2] = members as [Member, Member];
      await waitUntil(
        "both members to stream a disjoint share covering every pair",
        () =>
          streamedNow(s1).size > 0 &&
          streamedNow(s2).size > 0 &&
          streamedNow(s1).size + streamedNow(s2).size === PAIRS.length &&
          sharedNow(members).length === 0,
        30_000,
      );
      await sleep(2_000);
      const moved = [...streamedNow(s1)];
      s1.daemon.signal("SIGKILL");
      const failoverMs = await waitUntil(
        "the survivor to stream every pair",
        () => streamedNow(s2).size === PAIRS.length,
        30_000,
      );
      console.info(
        `stream failover of ${moved.length} pairs after kill -9: ${failoverMs} ms (lease ${LEASE_MS} ms)`,
      );
      expect(failoverMs).toBeLessThanOrEqual(LEASE_MS + PERIOD_MS + 3_000);
    } finally {
      clearInterval(sampler);
    }
    // no pair was in two members' open streams at any sample (joins wait for the old owner to let go)
    expect([...new Set(overlaps)]).toEqual([]);
  });
});
