// The Alertmanager sink on the cluster's shared path with a real Alertmanager (nats-server, a simulator, two daemons,
// prometheus-alertmanager notifying a webhook receiver): a firing alert reaches it and is re-sent while it fires,
// a kill -9 of the member that re-sends hands the re-sends to the survivor before the alert could lapse, and the
// receiver is notified once of the firing and once of the resolve.
import { beforeAll, describe, expect, it } from "vitest";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import { type RunningDaemon } from "../e2e/daemon.js";
import {
  alertmanagerAvailable,
  startAlertmanager,
  type Post,
  type RunningAlertmanager,
} from "./alertmanager.js";
import { startClusterMember } from "./member-config.js";
import { natsServerAvailable } from "./nats.js";
import { useNatsSuite } from "./suite.js";
import { sleep, waitUntil } from "./wait.js";

const PAIRS = syntheticPairIds(4);
const LEASE_MS = 3_000;
const PERIOD_MS = 1_000;
/** The sink re-sends every 2 s; each post is valid for 4 re-sends (8 s), longer than a failover (lease + claim). */
const RESEND_INTERVAL_MS = 2_000;
const SINK_TIMEOUT_MS = 1_500;
/** What both members poll and alert on: a pair failing 3 polls in a row fires upstream_error. */
const MEMBER = {
  pairs: PAIRS,
  periodMs: PERIOD_MS,
  leaseMs: LEASE_MS,
  rules: [{ kind: "upstream_error", threshold: 3 }],
};

const available = natsServerAvailable() && alertmanagerAvailable();

/** The posts that carry `pair`'s upstream_error as firing (an endsAt still ahead of the post). */
function firingPosts(posts: readonly Post[], pair: string): Post[] {
  return posts.filter((post) =>
    post.alerts.some(
      (alert) =>
        alert.labels["alertname"] === "upstream_error" &&
        alert.labels["pair"] === pair &&
        (alert.endsAt === undefined || Date.parse(alert.endsAt) > post.atMs),
    ),
  );
}

/** This member's delivery attempts to the alertmanager sink (every outcome), from its /metrics. */
async function deliveries(daemon: RunningDaemon): Promise<number> {
  const text = await (await fetch(`${daemon.httpUrl}/metrics`)).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith('pragma_monitor_sink_deliveries_total{sink="am"'))
    .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
}

describe.skipIf(!available)("cluster alertmanager sink (nats-server, 2 daemons, real Alertmanager)", () => {
  const suite = useNatsSuite({ simulator: { seed: 23, syntheticPairs: PAIRS.length } });
  let am: RunningAlertmanager;

  beforeAll(async () => {
    am = suite.closeAtEnd(await startAlertmanager({ groupWaitMs: 500, groupIntervalMs: 1_000 }));
  });

  async function startMember(id: string): Promise<RunningDaemon> {
    const sink = {
      kind: "alertmanager",
      name: "am",
      url: am.url,
      rules: ["upstream_error"],
      resendIntervalMs: RESEND_INTERVAL_MS,
      timeoutMs: SINK_TIMEOUT_MS,
    };
    const member = { ...MEMBER, id, natsUrls: suite.nats.urls, sinks: [sink] };
    return (await startClusterMember(suite.simulatorUrl, suite.proxies, member)).daemon;
  }

  it("re-sends a firing alert from one member, from the survivor after a kill -9, and notifies once each way", async () => {
    const members = [await startMember("a1"), await startMember("a2")];
    const pair = PAIRS[0] ?? "";
    await waitUntil(
      "the pair polled",
      () => suite.proxies.some((p) => p.requests.some((r) => r.pair === pair)),
      30_000,
    );
    for (const proxy of suite.proxies) proxy.failing.add(pair);
    const notified = (status: "firing" | "resolved"): number =>
      am.notifications.filter((n) => n.status === status && n.alerts.some((a) => a.labels["pair"] === pair))
        .length;
    await waitUntil("Alertmanager to notify the firing alert", () => notified("firing") > 0, 30_000);
    const firstPostAtMs = firingPosts(am.posts, pair)[0]?.atMs ?? 0;
    await waitUntil("two re-sends", () => firingPosts(am.posts, pair).length >= 3, 4 * RESEND_INTERVAL_MS);

    // the member that re-sends: the one whose delivery attempts grow over two re-sends
    const before = await Promise.all(members.map(deliveries));
    await sleep(2 * RESEND_INTERVAL_MS + 500);
    const grown = (await Promise.all(members.map(deliveries))).map((count, i) => count - (before[i] ?? 0));
    const senderIndex = (grown[0] ?? 0) >= (grown[1] ?? 0) ? 0 : 1;
    const sender = members[senderIndex];
    const survivor = members[1 - senderIndex];
    if (sender === undefined || survivor === undefined) throw new Error("two members expected");
    expect(grown[senderIndex]).toBeGreaterThan(0);
    const survivorBefore = await deliveries(survivor);
    sender.signal("SIGKILL");
    const killedAtMs = Date.now();
    await waitUntil(
      "the survivor to re-send",
      () => firingPosts(am.posts, pair).filter((post) => post.atMs > killedAtMs).length >= 2,
      LEASE_MS + 4 * RESEND_INTERVAL_MS,
    );
    expect(await deliveries(survivor)).toBeGreaterThan(survivorBefore);
    const firing = firingPosts(am.posts, pair);
    // re-sent while firing: never a gap the alert's validity (4 re-sends) would not cover, the kill included
    const gapsMs = firing.slice(1).map((post, i) => post.atMs - (firing[i]?.atMs ?? 0));
    expect(Math.max(...gapsMs)).toBeLessThan(4 * RESEND_INTERVAL_MS);

    for (const proxy of suite.proxies) proxy.failing.delete(pair);
    await waitUntil("Alertmanager to notify the resolve", () => notified("resolved") > 0, 30_000);
    await sleep(2 * RESEND_INTERVAL_MS); // a stale re-send of the firing would re-open the alert by now
    console.info(
      `cluster alertmanager: ${firing.length} firing posts over ${Date.now() - firstPostAtMs} ms ` +
        `(largest gap ${Math.max(...gapsMs)} ms, the kill included), attempts by member in 2 re-sends ` +
        `before the kill: ${grown.join("/")}, ${am.notifications.length} notifications`,
    );
    expect(notified("firing")).toBe(1);
    expect(notified("resolved")).toBe(1);
  }, 180_000);
});
