// Notification grouping across the cluster (real processes: nats-server, a simulator, three daemons behind counting
// suite.proxies, one signed webhook receiver): pairs of several members failing together make one group notification, the
// group interval holds for the cluster, and after a member is killed -9 the survivors neither announce an alert
// again nor lose its resolve (the group state is in NATS KV, not in a member).
import { beforeAll, describe, expect, it } from "vitest";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import { startWebhookReceiver, type WebhookReceiver } from "../e2e/webhook-receiver.js";
import { startClusterMember } from "./member-config.js";
import { natsServerAvailable } from "./nats.js";
import { useNatsSuite } from "./suite.js";
import { sleep, waitUntil } from "./wait.js";
import type { CountingProxy } from "./proxy.js";

const PAIRS = syntheticPairIds(12);
const LEASE_MS = 3_000;
const PERIOD_MS = 1_000;
const GROUP_WAIT_MS = 2_500;
const GROUP_INTERVAL_MS = 5_000;
const SECRET = "cluster-grouping-secret-0123456789";

const available = natsServerAvailable();

/** A group notification as the webhook receiver got it (docs/webhooks.md). */
interface GroupBody {
  readonly type: string;
  readonly repeat: boolean;
  readonly seqs: readonly number[];
  readonly alerts: readonly {
    readonly state: "new" | "firing" | "resolved";
    readonly alert: { readonly rule: string; readonly labels: Readonly<Record<string, string>> };
  }[];
}

interface Notified {
  readonly atMs: number;
  readonly deliveryId: string;
  readonly verified: boolean;
  readonly body: GroupBody;
}

/** Every notification the receiver accepted, oldest first. */
function accepted(hook: WebhookReceiver): Notified[] {
  return hook.deliveries.items
    .filter((d) => d.answeredStatus < 300)
    .map((d) => ({
      atMs: d.atMs,
      deliveryId: d.deliveryId,
      verified: d.verified,
      body: JSON.parse(d.rawBody) as GroupBody,
    }));
}

/** How often `pair`'s upstream_error is listed with `state` over `notified`. */
function listed(notified: readonly Notified[], pair: string, state: "new" | "resolved"): number {
  return notified
    .flatMap((n) => n.body.alerts)
    .filter((a) => a.state === state && a.alert.rule === "upstream_error" && a.alert.labels["pair"] === pair)
    .length;
}

describe.skipIf(!available)("cluster grouping (nats-server, 3 daemons, one grouping webhook)", () => {
  const suite = useNatsSuite({ simulator: { seed: 17, syntheticPairs: PAIRS.length } });
  let hook: WebhookReceiver;

  beforeAll(async () => {
    hook = suite.closeAtEnd(await startWebhookReceiver(SECRET, 200));
  });

  async function startMember(
    id: string,
  ): Promise<{ proxy: CountingProxy; signal: (s: NodeJS.Signals) => void }> {
    const sink = {
      kind: "webhook",
      name: "grouped",
      url: hook.url,
      secret: SECRET,
      rules: ["upstream_error"],
      groupBy: [],
      groupWaitMs: GROUP_WAIT_MS,
      groupIntervalMs: GROUP_INTERVAL_MS,
      repeatIntervalMs: 0,
      timeoutMs: 1_500,
    };
    const { proxy, daemon } = await startClusterMember(suite.simulatorUrl, suite.proxies, {
      id,
      natsUrls: suite.nats.urls,
      pairs: PAIRS,
      periodMs: PERIOD_MS,
      leaseMs: LEASE_MS,
      rules: [{ kind: "upstream_error", threshold: 3 }],
      sinks: [sink],
    });
    return { proxy, signal: (s) => daemon.signal(s) };
  }

  it("sends one notification per group for the cluster and keeps the group across a member's kill -9", async () => {
    const members = [await startMember("g1"), await startMember("g2"), await startMember("g3")];
    const polled = (pair: string): boolean =>
      members.some((m) => m.proxy.requests.some((r) => r.pair === pair && r.atMs >= Date.now() - 2_000));
    await waitUntil("every pair polled", () => PAIRS.every(polled), 30_000);
    await sleep(2_000); // settled: the later joiners' handover wait is over
    // one failing pair per member, so the group gathers alerts of three members
    const recentPoller = (pair: string): number =>
      members.findIndex((m) => m.proxy.requests.some((r) => r.pair === pair && r.atMs >= Date.now() - 1_500));
    const pickOnePerMember = (): (string | undefined)[] =>
      members.map((_, index) => PAIRS.find((pair) => recentPoller(pair) === index));
    await waitUntil(
      "every member polling a pair",
      () => pickOnePerMember().every((p) => p !== undefined),
      20_000,
    );
    const FAILED = pickOnePerMember();
    if (!FAILED.every((pair) => pair !== undefined))
      throw new Error(`a member polls no pair: ${String(FAILED)}`);

    for (const proxy of suite.proxies) for (const pair of FAILED) proxy.failing.add(pair);
    await waitUntil("a group notification", () => accepted(hook).length > 0, 20_000);
    const [first] = accepted(hook);
    // the failures of several members' pairs in one notification (the group wait gathered them)
    const firstPairs = first?.body.alerts.filter((a) => a.state === "new").map((a) => a.alert.labels["pair"]);
    expect(first?.body.type).toBe("group");
    expect(new Set(firstPairs).size).toBeGreaterThanOrEqual(2);

    // kill -9 a member, the pairs recover: the survivors hold the group (no second "new"), every resolve arrives once
    members[0]?.signal("SIGKILL");
    for (const proxy of suite.proxies) for (const pair of FAILED) proxy.failing.delete(pair);
    await waitUntil(
      "every failure announced and resolved",
      () =>
        FAILED.every(
          (pair) => listed(accepted(hook), pair, "new") > 0 && listed(accepted(hook), pair, "resolved") > 0,
        ),
      45_000,
    );
    await sleep(GROUP_INTERVAL_MS + LEASE_MS); // anything sent twice would have arrived by now
    const all = accepted(hook);
    console.info(
      `cluster grouping: ${all.length} notifications for ${FAILED.length} failing pairs of 3 members ` +
        `(first listed ${String(firstPairs?.length)} alerts), ${hook.deliveries.items.length} requests in all`,
    );
    expect(all.every((n) => n.verified && n.body.type === "group" && !n.body.repeat)).toBe(true);
    for (const pair of FAILED) {
      expect(listed(all, pair, "new")).toBe(1);
      expect(listed(all, pair, "resolved")).toBe(1);
    }
    // one group, one timer for the cluster: notifications a group interval apart, each event in one of them
    const gapsMs = all.slice(1).map((n, i) => n.atMs - (all[i] as Notified).atMs);
    expect(gapsMs.every((gapMs) => gapMs >= GROUP_INTERVAL_MS - 500)).toBe(true);
    const seqs = all.flatMap((n) => n.body.seqs);
    expect(seqs.length).toBe(new Set(seqs).size);
    expect(all.map((n) => n.deliveryId).length).toBe(new Set(all.map((n) => n.deliveryId)).size);
  }, 180_000);
});
