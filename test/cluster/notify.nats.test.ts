// Exactly one notification per event per sink across the cluster (real processes: nats-server, a simulator, three
// daemons behind counting suite.proxies, one signed webhook receiver): the member owning a spiking pair is killed -9, the
// alert still arrives once; a 503 with Retry-After is delivered once, after the delay; no event arrives twice; a
// sink that never accepts has each of its notifications dead-lettered once into its own stream after maxAgeMs.
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { beforeAll, describe, expect, it } from "vitest";
import { deadLetterStream } from "../../src/cluster/sink-delivery.js";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import { type RunningDaemon } from "../e2e/daemon.js";
import { postFault } from "../e2e/fixtures.js";
import { startWebhookReceiver, type Delivery, type WebhookReceiver } from "../e2e/webhook-receiver.js";
import { startClusterMember } from "./member-config.js";
import { natsServerAvailable } from "./nats.js";
import { useNatsSuite } from "./suite.js";
import { sleep, waitUntil } from "./wait.js";
import type { CountingProxy } from "./proxy.js";

const PAIRS = syntheticPairIds(9);
const LEASE_MS = 3_000;
const PERIOD_MS = 1_000;
const SINK_TIMEOUT_MS = 1_500;
/** A spike outlasts the test: its end (a fall as large as its rise) would be a second, true `price_change`. */
const SPIKE_MS = 120_000;
const SECRET = "cluster-notify-secret-0123456789";
/** A second sink that never accepts, with the shortest `maxAgeMs`: everything it routes is dead-lettered. */
const DEAD_SINK = "never.up";

const available = natsServerAvailable();

interface Member {
  readonly proxy: CountingProxy;
  readonly daemon: RunningDaemon;
}

/** The member that polled `pair` within the last `windowMs`, if any. */
function pollerOf(members: readonly Member[], pair: string, windowMs: number): Member | undefined {
  const sinceMs = Date.now() - windowMs;
  return members.find((member) => member.proxy.requests.some((r) => r.pair === pair && r.atMs >= sinceMs));
}

/** Every request that carried a price_change transition of `pair` (any answer). */
function attemptsFor(hook: WebhookReceiver, pair: string): Delivery[] {
  return hook.deliveries.items.filter(
    (d) => d.event?.alert.rule === "price_change" && d.event.alert.labels["pair"] === pair,
  );
}

/** Whether `member`'s stdout sink logged a firing price_change of `pair` (it published it). */
function publishedSpike(member: Member, pair: string): boolean {
  return member.daemon.logs.items.some((line) => {
    const alert = line["alert"] as
      { rule?: string; status?: string; labels?: Record<string, string> } | undefined;
    return alert?.rule === "price_change" && alert.status === "firing" && alert.labels?.["pair"] === pair;
  });
}

describe.skipIf(!available)("cluster notifications (nats-server, 3 daemons, one webhook)", () => {
  const suite = useNatsSuite({ simulator: { seed: 11, syntheticPairs: PAIRS.length } });
  let hook: WebhookReceiver;
  let downHook: WebhookReceiver;

  beforeAll(async () => {
    hook = suite.closeAtEnd(await startWebhookReceiver(SECRET, 200));
    downHook = suite.closeAtEnd(await startWebhookReceiver(SECRET, 503));
  });

  async function startMember(id: string): Promise<Member> {
    const { proxy, daemon } = await startClusterMember(suite.simulatorUrl, suite.proxies, {
      id,
      natsUrls: suite.nats.urls,
      pairs: PAIRS,
      periodMs: PERIOD_MS,
      leaseMs: LEASE_MS,
      rules: [{ kind: "price_change", windowMs: 5_000, threshold: 0.04 }],
      sinks: [
        {
          kind: "webhook",
          name: "hook",
          url: hook.url,
          secret: SECRET,
          failureThreshold: 1000,
          timeoutMs: SINK_TIMEOUT_MS,
          ratePerMinute: 600,
          burst: 50,
          groupBy: ["..."],
        },
        {
          kind: "webhook",
          name: DEAD_SINK,
          url: downHook.url,
          secret: SECRET,
          failureThreshold: 1000,
          timeoutMs: SINK_TIMEOUT_MS,
          maxAgeMs: 1_000,
          rules: ["price_change"],
        },
      ],
    });
    return { proxy, daemon };
  }

  it("notifies a spike once although its owner is killed -9, honours Retry-After, and never notifies an event twice", async () => {
    const members = [await startMember("n1"), await startMember("n2"), await startMember("n3")];
    await waitUntil(
      "every pair polled",
      () => PAIRS.every((pair) => pollerOf(members, pair, 2_000) !== undefined),
      30_000,
    );
    await sleep(2_000); // settled: the later joiners' handover wait is over

    // a spike on a pair; the receiver refuses its first notification (503), then its owner is killed -9: the
    // notification is the cluster's, not the owner's, so a survivor delivers it
    const spiked = PAIRS[0] as string;
    // on a loaded machine a poll can come late, or a join's handover can leave a pair unpolled for a moment
    let owner: Member | undefined;
    await waitUntil(
      `a member polling ${spiked}`,
      () => (owner = pollerOf(members, spiked, 1_500)) !== undefined,
      10_000,
    );
    if (owner === undefined) throw new Error(`nobody polls ${spiked}`);
    // the second spike is on a pair a survivor polled all along (its price window is full)
    const retried = PAIRS.find((pair) => ![undefined, owner].includes(pollerOf(members, pair, 1_500)));
    if (retried === undefined) throw new Error("the owner polls every pair");
    hook.status = 503;
    await postFault(suite.simulatorUrl, { kind: "spike", pair: spiked, factor: 1.2 }, SPIKE_MS);
    await waitUntil(
      "the spike's first notification refused",
      () => attemptsFor(hook, spiked).length > 0,
      10_000,
    );
    expect(publishedSpike(owner, spiked)).toBe(true);
    const killedAtMs = Date.now();
    owner.daemon.signal("SIGKILL");
    hook.status = 200;
    await waitUntil(
      "the spike notified",
      () => attemptsFor(hook, spiked).some((d) => d.answeredStatus < 300),
      LEASE_MS + PERIOD_MS + 5_000,
    );
    const notifiedAfterMs =
      (attemptsFor(hook, spiked).find((d) => d.answeredStatus < 300)?.atMs ?? 0) - killedAtMs;
    expect(notifiedAfterMs).toBeLessThanOrEqual(LEASE_MS + PERIOD_MS);

    // the receiver is down with Retry-After: 2 for the next notification, then accepts
    hook.status = 503;
    hook.retryAfter = "2";
    await postFault(suite.simulatorUrl, { kind: "spike", pair: retried, factor: 1.2 }, SPIKE_MS);
    await waitUntil("a 503 answered", () => attemptsFor(hook, retried).length > 0, 15_000);
    hook.status = 200;
    hook.retryAfter = undefined;
    await waitUntil(
      "the retried notification accepted",
      () => attemptsFor(hook, retried).some((d) => d.answeredStatus < 300),
      10_000,
    );
    const [refused, acceptedAttempt] = attemptsFor(hook, retried);
    if (refused === undefined || acceptedAttempt === undefined) throw new Error("no retry seen");
    expect(refused.answeredStatus).toBe(503);
    expect(acceptedAttempt.answeredStatus).toBe(200);
    expect(acceptedAttempt.deliveryId).toBe(refused.deliveryId);
    expect(acceptedAttempt.atMs - refused.atMs).toBeGreaterThanOrEqual(1_900);
    expect(acceptedAttempt.atMs - refused.atMs).toBeLessThan(2_000 + 3_000);

    await sleep(LEASE_MS + PERIOD_MS + 2_000); // a late redelivery of anything would have arrived by now
    console.info(
      `cluster notify: the spike was notified ${notifiedAfterMs} ms after its owner's kill -9; ` +
        `${hook.deliveries.items.length} requests in all`,
    );
    const acceptedAll = hook.deliveries.items.filter((d) => d.answeredStatus < 300);
    // one accepted notification per event (its seq is the idempotency key), signed, and the spike's firing once
    expect(acceptedAll.every((d) => d.verified && d.deliveryId === String(d.event?.seq))).toBe(true);
    const ids = acceptedAll.map((d) => d.deliveryId);
    expect(ids.length - new Set(ids).size).toBe(0);
    const spikeFirings = attemptsFor(hook, spiked).filter(
      (d) => d.answeredStatus < 300 && d.event?.alert.status === "firing",
    );
    expect(spikeFirings).toHaveLength(1);
    expect(
      attemptsFor(hook, retried).filter((d) => d.answeredStatus < 300 && d.event?.alert.status === "firing"),
    ).toHaveLength(1);

    // the sink that never accepts: each of its notifications tried, then dead-lettered once into its own stream
    const firingSeqs = acceptedAll.filter((d) => d.event?.alert.status === "firing").map((d) => d.event?.seq);
    const letters = await readDeadLetters(suite.nats.urls);
    expect(letters.every((letter) => letter.sink === DEAD_SINK && letter.reason === "max_age")).toBe(true);
    const letterSeqs = letters.map((letter) => letter.event.seq);
    expect(letterSeqs).toEqual([...new Set(letterSeqs)]);
    expect(letterSeqs).toEqual(expect.arrayContaining(firingSeqs));
  });
});

/** Every dead letter of DEAD_SINK, read from its stream message by message. */
async function readDeadLetters(
  urls: readonly string[],
): Promise<{ sink: string; reason: string; event: { seq: number } }[]> {
  const nc = await connect({ servers: [...urls] });
  try {
    const jsm = await jetstreamManager(nc);
    const { stream } = deadLetterStream(DEAD_SINK);
    const { state } = await jsm.streams.info(stream);
    const letters: { sink: string; reason: string; event: { seq: number } }[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
      const msg = await jsm.streams.getMessage(stream, { seq });
      if (msg !== null) letters.push(msg.json());
    }
    return letters;
  } finally {
    await nc.close();
  }
}
