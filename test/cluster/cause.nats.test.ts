// A cause alert in a cluster (real processes: nats-server, a simulator, three daemons, one webhook receiver): the
// upstream fails for every pair; `upstream_down` is published to the cluster's log once (by one member, not one
// per member over its share), delivered once; its publisher is killed -9 and a survivor carries it on without
// announcing it again, and resolves it once when the upstream answers again.
import { beforeAll, describe, expect, it } from "vitest";
import type { AlertPayload } from "../../src/domain/events.js";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import { startWebhookReceiver, type WebhookReceiver } from "../e2e/webhook-receiver.js";
import { delivered, published, startCauseMembers } from "./cause-members.js";
import { natsServerAvailable } from "./nats.js";
import { useNatsSuite } from "./suite.js";
import { sleep, waitUntil } from "./wait.js";

const PAIRS = syntheticPairIds(12);
const LEASE_MS = 3_000;
const PERIOD_MS = 1_000;
const SECRET = "cluster-cause-secret-0123456789";

const available = natsServerAvailable();

const transitions = (alerts: readonly AlertPayload[]): string[] =>
  alerts.map((a) => `${a.status}/${a.reason}`);

describe.skipIf(!available)("cluster cause alert (nats-server, 3 daemons, upstream down)", () => {
  const suite = useNatsSuite({ simulator: { seed: 11, syntheticPairs: PAIRS.length } });
  let hook: WebhookReceiver;

  beforeAll(async () => {
    hook = suite.closeAtEnd(await startWebhookReceiver(SECRET, 200));
  });

  /** POST a fault to the simulator's control endpoint; its id. */
  async function injectFault(fault: Record<string, unknown>): Promise<string> {
    const response = await fetch(`${suite.simulatorUrl}/_sim/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(fault),
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: string }).id;
  }

  it("announces upstream_down once for the cluster, hands it over on kill -9 and resolves it once", async () => {
    const { members, shares } = await startCauseMembers(suite, {
      ids: ["c1", "c2", "c3"],
      pairs: PAIRS,
      periodMs: PERIOD_MS,
      leaseMs: LEASE_MS,
      rules: [
        { kind: "upstream_error", threshold: 2 },
        // a low count: the whole cluster's count is cause-union.nats.test.ts's
        { kind: "upstream_down", threshold: 2, minFraction: 0.5, windowMs: 10_000 },
      ],
      hook,
      secret: SECRET,
    });
    console.info(`cause: pairs per member ${shares.join("/")}`);

    const faultId = await injectFault({ kind: "outage", status: 500 });
    await waitUntil(
      "upstream_down delivered as firing",
      () => delivered(hook, "upstream_down").some((a) => a.status === "firing"),
      20_000,
    );
    await sleep(4_000); // the other members' verdicts (one per member today) would be in by now
    const firsts = members.flatMap((daemon) =>
      published(daemon, "upstream_down").filter((a) => a.status === "firing" && a.reason === "first"),
    );
    console.info(
      `cause: upstream_down firsts published ${firsts.length}, delivered ${delivered(hook, "upstream_down").length}`,
    );
    expect(firsts).toHaveLength(1);
    expect(transitions(delivered(hook, "upstream_down"))).toEqual(["firing/first"]);

    // its publisher (the cause key's owner) is killed: a survivor adopts the firing alert without announcing it
    const owner = members.find((daemon) => published(daemon, "upstream_down").length > 0);
    if (owner === undefined) throw new Error("no member published upstream_down");
    const killedAtMs = Date.now();
    owner.signal("SIGKILL");
    const survivors = members.filter((daemon) => daemon !== owner);
    await waitUntil(
      "every pair polled by a survivor after the kill",
      () =>
        PAIRS.every((pair) =>
          suite.proxies.some(
            (p, i) => members[i] !== owner && p.requests.some((r) => r.pair === pair && r.atMs > killedAtMs),
          ),
        ),
      LEASE_MS + PERIOD_MS + 15_000,
    );
    await sleep(3_000);
    expect(transitions(delivered(hook, "upstream_down"))).toEqual(["firing/first"]);

    const response = await fetch(`${suite.simulatorUrl}/_sim/faults/${faultId}`, { method: "DELETE" });
    expect(response.status).toBe(204);
    await waitUntil(
      "upstream_down delivered as resolved",
      () => delivered(hook, "upstream_down").some((a) => a.status === "resolved"),
      20_000,
    );
    await sleep(3_000);
    const resolves = survivors.flatMap((daemon) =>
      published(daemon, "upstream_down").filter((a) => a.status === "resolved"),
    );
    expect(resolves).toHaveLength(1);
    expect(transitions(delivered(hook, "upstream_down"))).toEqual(["firing/first", "resolved/resolved"]);
  }, 120_000);
});
