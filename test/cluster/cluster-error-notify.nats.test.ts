// cluster_error reaches the chat-ops sinks of a member that lost NATS (real processes: nats-server, a simulator, one
// daemon, one signed webhook receiver): sent straight from the member, retried under one delivery id after a 503,
// accepted once; its resolve once when NATS is back.
import { beforeAll, describe, expect, it } from "vitest";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import { startDaemon, startSimulatorProcess } from "../e2e/daemon.js";
import { makeWorkDir, writeConfig } from "../e2e/fixtures.js";
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from "../e2e/webhook-receiver.js";
import { memberConfig } from "./member-config.js";
import { natsServerAvailable } from "./nats.js";
import { useNatsSuite } from "./suite.js";
import { sleep, waitUntil } from "./wait.js";

const SECRET = "cluster-error-secret-0123456789";
const available = natsServerAvailable();
/** The receiver's cluster_error requests with `status` (any answer). */
function clusterErrors(hook: WebhookReceiver, status: "firing" | "resolved"): Delivery[] {
  return hook.deliveries.items.filter(
    (d) => d.event?.alert.rule === "cluster_error" && d.event.alert.status === status,
  );
}

describe.skipIf(!available)(
  "cluster_error to the chat-ops sinks (nats-server, 1 daemon, one webhook)",
  () => {
    const suite = useNatsSuite({ daemons: true });
    let hook: WebhookReceiver;

    beforeAll(async () => {
      hook = suite.closeAtEnd(await startWebhookReceiver(SECRET, 200));
    });

    it("sends cluster_error from the member while NATS is lost, once, and its resolve once NATS is back", async () => {
      const work = makeWorkDir();
      const pairs = syntheticPairIds(2);
      const simulatorUrl = (await startSimulatorProcess(work.dir, { seed: 5, syntheticPairs: pairs.length }))
        .url;
      const sink = { kind: "webhook", name: "ops", url: hook.url, secret: SECRET, timeoutMs: 1_500 };
      const options = {
        id: "e1",
        upstreamUrl: simulatorUrl,
        natsUrls: suite.nats.urls,
        pairs,
        periodMs: 1_000,
      };
      const rules = [{ kind: "upstream_error", threshold: 3 }];
      writeConfig(work, memberConfig(work, { ...options, leaseMs: 3_000, rules, sinks: [sink] }));
      const daemon = await startDaemon(work.configFile, { cwd: work.dir, simulatorUrl, timeoutMs: 20_000 });
      await daemon.logs.waitFor((line) => String(line["msg"]).includes("cluster"), {
        timeoutMs: 20_000,
        what: "the member in the cluster",
      });
      await sleep(2_000);

      const node = suite.nats.nodes[0];
      if (node === undefined) throw new Error("no nats node");
      hook.status = 503; // the first attempt is refused: retried under the same delivery id
      await node.kill();
      await waitUntil("cluster_error sent", () => clusterErrors(hook, "firing").length > 0, 20_000);
      hook.status = 200;
      await waitUntil(
        "cluster_error accepted",
        () => clusterErrors(hook, "firing").some((d) => d.answeredStatus < 300),
        15_000,
      );
      await node.restart();
      await waitUntil(
        "cluster_error resolved",
        () => clusterErrors(hook, "resolved").some((d) => d.answeredStatus < 300),
        30_000,
      );
      await sleep(3_000); // a second notification of either would have come by now
      const firing = clusterErrors(hook, "firing");
      const resolved = clusterErrors(hook, "resolved");
      console.info(
        `cluster_error direct: ${firing.length} firing attempts (first refused), ${resolved.length} resolve attempts`,
      );
      expect(firing[0]?.answeredStatus).toBe(503);
      expect(new Set(firing.map((d) => d.deliveryId)).size).toBe(1);
      expect(firing.filter((d) => d.answeredStatus < 300)).toHaveLength(1);
      expect(resolved.filter((d) => d.answeredStatus < 300)).toHaveLength(1);
      expect(
        [...firing, ...resolved].every((d) => d.verified && d.event?.alert.labels["member"] === "e1"),
      ).toBe(true);
      expect(resolved[0]?.deliveryId).not.toBe(firing[0]?.deliveryId);
    }, 180_000);
  },
);
