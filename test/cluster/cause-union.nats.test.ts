// A cause rule judges the whole cluster (real processes: nats-server, a simulator, three daemons, one webhook
// receiver): the upstream fails for every pair; `upstream_down`, whose count threshold is above any one member's share,
// fires once for the cluster counting all 12 pairs, and the `upstream_error` children on every member, the cause
// owner's or not, carry its fingerprint (causedBy), so none is delivered to the webhook on its own.
import { beforeAll, describe, expect, it } from "vitest";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import { startWebhookReceiver, type WebhookReceiver } from "../e2e/webhook-receiver.js";
import { delivered, published, startCauseMembers } from "./cause-members.js";
import { natsServerAvailable } from "./nats.js";
import { useNatsSuite } from "./suite.js";
import { sleep, waitUntil } from "./wait.js";

const PAIRS = syntheticPairIds(12);
const LEASE_MS = 3_000;
const PERIOD_MS = 1_000;
const SECRET = "cluster-cause-union-secret-01234";

const available = natsServerAvailable();

describe.skipIf(!available)(
  "cluster cause alert over every member's targets (nats-server, 3 daemons)",
  () => {
    const suite = useNatsSuite({ simulator: { seed: 13, syntheticPairs: PAIRS.length } });
    let hook: WebhookReceiver;

    beforeAll(async () => {
      hook = suite.closeAtEnd(await startWebhookReceiver(SECRET, 200));
    });

    it("fires upstream_down once counting all 12 pairs, and no member's upstream_error is delivered on its own", async () => {
      const { members, shares } = await startCauseMembers(suite, {
        ids: ["u1", "u2", "u3"],
        pairs: PAIRS,
        periodMs: PERIOD_MS,
        leaseMs: LEASE_MS,
        rules: [
          // the children fire at their 5th failed poll (failing polls back off: 10 s or more after the first): the
          // cluster's verdict (a second or two after all 12 fail) reached every member's log well before
          { kind: "upstream_error", threshold: 5 },
          // 10 of 12: more than any member's share (about 4), reached only by counting the cluster; every one of
          // the 12 (minFraction 1), so it fires at 12, not at 11 while a peer's summary still lacks the 12th
          { kind: "upstream_down", threshold: 10, minFraction: 1, windowMs: 10_000 },
        ],
        hook,
        secret: SECRET,
      });
      console.info(`cause-union: pairs per member ${shares.join("/")}`);
      expect(Math.max(...shares)).toBeLessThan(10);

      const response = await fetch(`${suite.simulatorUrl}/_sim/faults`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ kind: "outage", status: 500 }),
      });
      expect(response.status).toBe(201);
      await waitUntil(
        "upstream_down delivered as firing",
        () => delivered(hook, "upstream_down").some((a) => a.status === "firing"),
        20_000,
      );
      const [parent] = delivered(hook, "upstream_down");
      expect(parent?.value).toBe(12);
      expect(parent?.summary).toMatch(/: 12 of 12 targets failing since /);
      // every member's children fire meanwhile (threshold 5, failing polls backing off), each linked to the cluster's parent
      await waitUntil(
        "every pair's upstream_error published",
        () =>
          new Set(members.flatMap((d) => published(d, "upstream_error").map((a) => a.labels["pair"])))
            .size === 12,
        40_000,
      );
      await sleep(3_000);
      const firsts = members.flatMap((d) =>
        published(d, "upstream_down").filter((a) => a.status === "firing" && a.reason === "first"),
      );
      expect(firsts).toHaveLength(1);
      const children = members.map((d) =>
        published(d, "upstream_error").filter((a) => a.status === "firing" && a.reason === "first"),
      );
      console.info(
        `cause-union: upstream_error firsts per member ${children.map((c) => c.length).join("/")}`,
      );
      // at least two members hold children: the cause owner's and another's
      expect(children.filter((c) => c.length > 0).length).toBeGreaterThanOrEqual(2);
      for (const alert of children.flat()) expect(alert.causedBy).toBe(parent?.fingerprint);
      expect(delivered(hook, "upstream_error")).toEqual([]);
    }, 120_000);
  },
);
