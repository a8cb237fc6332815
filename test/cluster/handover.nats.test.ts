// Alert state moves with a cluster target (real processes: nats-server, a simulator, three daemons behind failing
// suite.proxies, one webhook receiver): a member killed -9 while an alert fires on its target; the new owner neither
// announces it again nor loses the resolve of a target that recovered during the handover; when the member comes
// back (same id, so the same rendezvous share) the target moves back without a `target_removed` resolve.
import { beforeAll, describe, expect, it } from "vitest";
import type { AlertPayload } from "../../src/domain/events.js";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import { startDaemon, type RunningDaemon } from "../e2e/daemon.js";
import { startWebhookReceiver, type WebhookReceiver } from "../e2e/webhook-receiver.js";
import { startClusterMember } from "./member-config.js";
import { natsServerAvailable } from "./nats.js";
import { useNatsSuite } from "./suite.js";
import { sleep, waitUntil } from "./wait.js";
import type { CountingProxy } from "./proxy.js";

const PAIRS = syntheticPairIds(12);
const LEASE_MS = 3_000;
const PERIOD_MS = 1_000;
const SECRET = "cluster-handover-secret-0123456789";

const available = natsServerAvailable();

interface Member {
  readonly id: string;
  readonly proxy: CountingProxy;
  readonly daemon: RunningDaemon;
  readonly stateDir: string;
  readonly configFile: string;
  readonly dir: string;
}

/** The member that polled `pair` most recently (within the last `windowMs`), if any. */
function pollerOf(members: readonly Member[], pair: string, windowMs: number): Member | undefined {
  const sinceMs = Date.now() - windowMs;
  return members.find((member) => member.proxy.requests.some((r) => r.pair === pair && r.atMs >= sinceMs));
}

/** The upstream_error alerts the receiver accepted for a pair. */
function delivered(hook: WebhookReceiver, pair: string): AlertPayload[] {
  return hook.deliveries.items.flatMap((d) =>
    d.answeredStatus < 300 &&
    d.event?.alert.rule === "upstream_error" &&
    d.event.alert.labels["pair"] === pair
      ? [d.event.alert]
      : [],
  );
}

/** The alert events `member` published for `fingerprint` (its stdout sink logs the events it published, and only those). */
function published(member: Member, fingerprint: string): AlertPayload[] {
  return member.daemon.logs.items.flatMap((line) => {
    const alert = line["event"] === "alert" ? (line["alert"] as AlertPayload | undefined) : undefined;
    return alert?.fingerprint === fingerprint ? [alert] : [];
  });
}

describe.skipIf(!available)("cluster alert handover (nats-server, 3 daemons, kill -9)", () => {
  const suite = useNatsSuite({ simulator: { seed: 7, syntheticPairs: 12 } });
  let hook: WebhookReceiver;

  beforeAll(async () => {
    hook = suite.closeAtEnd(await startWebhookReceiver(SECRET, 200));
  });

  /** Start a member with its own work dir and proxy, notifying the shared webhook receiver. */
  async function startMember(id: string): Promise<Member> {
    const sink = { kind: "webhook", name: "hook", url: hook.url, secret: SECRET, failureThreshold: 1000 };
    const { proxy, daemon, work } = await startClusterMember(suite.simulatorUrl, suite.proxies, {
      id,
      natsUrls: suite.nats.urls,
      pairs: PAIRS,
      periodMs: PERIOD_MS,
      leaseMs: LEASE_MS,
      rules: [{ kind: "upstream_error", threshold: 3 }],
      sinks: [{ ...sink, timeoutMs: 2_000, groupBy: ["..."] }],
    });
    return { id, proxy, daemon, stateDir: work.stateDir, configFile: work.configFile, dir: work.dir };
  }

  it("does not announce a firing alert again after kill -9, resolves once a target that recovered meanwhile, and moves back without a resolve", async () => {
    const members = [await startMember("h1"), await startMember("h2"), await startMember("h3")];
    await waitUntil(
      "every pair polled",
      () => PAIRS.every((pair) => pollerOf(members, pair, 2_000) !== undefined),
      30_000,
    );
    await sleep(2_000); // settled: the handover wait of the later joiners is over
    // two pairs of one member: one keeps failing across the kill, one recovers while its owner is dead
    const byOwner = new Map<Member, string[]>();
    for (const pair of PAIRS) {
      const owner = pollerOf(members, pair, 1_500);
      if (owner !== undefined) byOwner.set(owner, [...(byOwner.get(owner) ?? []), pair]);
    }
    const [victim, pairs] = [...byOwner].find(([, owned]) => owned.length >= 2) ?? [];
    if (victim === undefined || pairs === undefined) throw new Error("no member polls two pairs");
    const [failingPair, recoveringPair] = pairs as [string, string];
    for (const proxy of suite.proxies) proxy.failing.add(failingPair).add(recoveringPair);
    await waitUntil(
      "both alerts delivered as firing",
      () => [failingPair, recoveringPair].every((pair) => delivered(hook, pair).length > 0),
      20_000,
    );
    const [firing] = delivered(hook, failingPair);
    const [recovering] = delivered(hook, recoveringPair);
    if (firing === undefined || recovering === undefined) throw new Error("no firing alert");
    await sleep(500); // the checkpoint is written right after the transition

    const killedAtMs = Date.now();
    victim.daemon.signal("SIGKILL");
    for (const proxy of suite.proxies) proxy.failing.delete(recoveringPair);
    const survivors = members.filter((member) => member !== victim);
    await waitUntil(
      "the recovered alert resolved",
      () => delivered(hook, recoveringPair).some((alert) => alert.status === "resolved"),
      LEASE_MS + PERIOD_MS + 10_000,
    );
    const resolvedAfterMs = Date.now() - killedAtMs;
    // the failing pair is polled (and failing) by its new owner for several periods: no new `first`
    await waitUntil(
      "the failing pair polled by a survivor for 4 s",
      () =>
        survivors.some(
          (member) =>
            member.proxy.requests.filter((r) => r.pair === failingPair && r.atMs > killedAtMs).length >= 4,
        ),
      LEASE_MS + PERIOD_MS + 10_000,
    );
    await sleep(1_000); // a late duplicate would have been delivered by now
    console.info(
      `handover: the recovered target's resolve was delivered ${resolvedAfterMs} ms after kill -9`,
    );

    const failingFirsts = delivered(hook, failingPair).filter(
      (a) => a.status === "firing" && a.reason === "first",
    );
    expect(failingFirsts.map((a) => a.fingerprint)).toEqual([firing.fingerprint]);
    expect(delivered(hook, failingPair).filter((a) => a.status === "resolved")).toEqual([]);
    const recoveringAlerts = delivered(hook, recoveringPair);
    expect(recoveringAlerts.filter((a) => a.status === "firing" && a.reason === "first")).toHaveLength(1);
    const resolves = recoveringAlerts.filter((a) => a.status === "resolved");
    expect(resolves).toHaveLength(1);
    expect(resolves[0]?.startsAt).toBe(recovering.startsAt);
    // what the survivors published to the cluster's log: no `first` for either, one resolve for the recovered
    for (const member of survivors)
      expect(
        published(member, firing.fingerprint).filter((a) => a.status === "firing" && a.reason === "first"),
      ).toEqual([]);
    const publishedResolves = survivors.flatMap((member) =>
      published(member, recovering.fingerprint).filter((a) => a.status === "resolved"),
    );
    expect(publishedResolves).toHaveLength(1);

    // the killed member comes back with its id: it takes its share back (a graceful handover by the survivors)
    const rejoinedAtMs = Date.now();
    await startDaemon(victim.configFile, {
      cwd: victim.dir,
      simulatorUrl: victim.proxy.url,
      timeoutMs: 20_000,
    });
    await waitUntil(
      "the failing pair polled again by its first owner",
      () => victim.proxy.requests.filter((r) => r.pair === failingPair && r.atMs > rejoinedAtMs).length >= 4,
      LEASE_MS + PERIOD_MS + 15_000,
    );
    await sleep(1_000);
    expect(delivered(hook, failingPair).map((a) => `${a.status}/${a.reason}`)).toEqual(["firing/first"]);
    for (const member of members)
      expect(published(member, firing.fingerprint).filter((a) => a.status === "resolved")).toEqual([]);
  });
});
