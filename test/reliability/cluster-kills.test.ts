// Cluster failover under repeated kill -9 (issue 21): three built daemons share the pairs through our own nats-server;
// each round spikes a pair and kills a member (the spike's owner or another), a replacement joins; every transition
// the cluster journaled reaches the webhook exactly once, and the journal never announces an alert twice.
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventOfMessage } from "../../src/cluster/journal-log.js";
import { EVENTS_STREAM } from "../../src/cluster/journal-stream.js";
import type { JournaledEvent } from "../../src/domain/events.js";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import { startClusterMember } from "../cluster/member-config.js";
import { natsServerAvailable, startNats, type NatsCluster } from "../cluster/nats.js";
import type { CountingProxy } from "../cluster/proxy.js";
import { ensureBuilt, killAllDaemons, startSimulatorProcess, type RunningDaemon } from "../e2e/daemon.js";
import { makeWorkDir, postFault, removeWorkDirs } from "../e2e/fixtures.js";
import { startWebhookReceiver, type WebhookReceiver } from "../e2e/webhook-receiver.js";
import { checkJournal } from "./support/journal-check.js";
import { SEED, budget, randomInt, seededRandom } from "./support/mode.js";
import { reportSuite } from "./support/report.js";

const KILLS = budget(3, 10);
const PAIRS = syntheticPairIds(12);
const LEASE_MS = 3_000;
const PERIOD_MS = 500;
const WINDOW_MS = 3_000;
const SECRET = "reliability-cluster-kills-secret";

const available = natsServerAvailable();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One running member: its daemon and the proxy that shows which pairs it polls. */
interface Member {
  readonly id: string;
  readonly proxy: CountingProxy;
  readonly daemon: RunningDaemon;
}

/** Wait until `done()` holds; false when `timeoutMs` passed first. */
async function waitFor(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/** The live member that polled `pair` within the last `windowMs`. */
function pollerOf(members: readonly Member[], pair: string, windowMs: number): Member | undefined {
  const sinceMs = Date.now() - windowMs;
  return members.find((member) => member.proxy.requests.some((r) => r.pair === pair && r.atMs >= sinceMs));
}

/**
 * Whether the cluster is settled: each pair polled in the last second by exactly one member, and every member
 * polling. A price move while a pair changes hands is outside the contract tested here: after a kill -9 the new
 * owner's price window starts at its first poll (docs/cluster.md); across a join, see history-handover.nats.test.ts.
 */
function settled(members: readonly Member[]): boolean {
  const sinceMs = Date.now() - 1_000;
  const pollers = (pair: string) =>
    members.filter((member) => member.proxy.requests.some((r) => r.pair === pair && r.atMs >= sinceMs));
  return (
    PAIRS.every((pair) => pollers(pair).length === 1) &&
    members.every((member) => member.proxy.requests.some((r) => r.atMs >= sinceMs))
  );
}

/** Every event of the cluster's journal stream, in stream order, and who published each (`m3/<incarnation>`). */
async function readClusterJournal(
  urls: readonly string[],
): Promise<{ events: JournaledEvent[]; publisherOf: Map<number, string> }> {
  const nc = await connect({ servers: [...urls] });
  try {
    const jsm = await jetstreamManager(nc);
    const { state } = await jsm.streams.info(EVENTS_STREAM);
    const events: JournaledEvent[] = [];
    const publisherOf = new Map<number, string>();
    for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
      const msg = await jsm.streams.getMessage(EVENTS_STREAM, { seq });
      const event = msg === null ? undefined : eventOfMessage(msg.string(), seq);
      if (event !== undefined) events.push(event);
      publisherOf.set(seq, msg?.header.get("Nats-Msg-Id").split(":")[0] ?? "?");
    }
    return { events, publisherOf };
  } finally {
    await nc.close();
  }
}

/** For a failure: each event of the alerts a problem names, with its publisher and time, to tell what happened. */
function historyOf(
  problems: readonly string[],
  events: readonly JournaledEvent[],
  publisherOf: ReadonlyMap<number, string>,
): string[] {
  return events.flatMap((event) =>
    event.type === "alert" && problems.some((problem) => problem.includes(event.alert.fingerprint))
      ? [
          `${event.alert.fingerprint} seq ${event.seq} ${event.alert.status}/${event.alert.reason} by ${publisherOf.get(event.seq)} startsAt ${event.alert.startsAt} endsAt ${event.alert.endsAt}`,
        ]
      : [],
  );
}

describe.skipIf(!available)("cluster failover under repeated kill -9 (nats-server, 3 built daemons)", () => {
  const startedAtMs = Date.now();
  const random = seededRandom(SEED + 21);
  let nats: NatsCluster;
  let simulatorUrl: string;
  let hook: WebhookReceiver;
  const members: Member[] = [];
  const proxies: CountingProxy[] = [];
  let started = 0;

  beforeAll(async () => {
    ensureBuilt();
    nats = await startNats(1);
    hook = await startWebhookReceiver(SECRET, 200);
    simulatorUrl = (
      await startSimulatorProcess(makeWorkDir().dir, { seed: SEED, syntheticPairs: PAIRS.length })
    ).url;
  }, 120_000);

  afterAll(async () => {
    await killAllDaemons();
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await hook?.close();
    await nats?.close();
    removeWorkDirs();
  });

  /** Start member `m<n>` with its own state dir and counting proxy. */
  async function startMember(): Promise<Member> {
    const sink = { kind: "webhook", name: "hook", url: hook.url, secret: SECRET, failureThreshold: 1000 };
    return startClusterMember(simulatorUrl, proxies, {
      id: `m${++started}`,
      natsUrls: nats.urls,
      pairs: PAIRS,
      periodMs: PERIOD_MS,
      leaseMs: LEASE_MS,
      rules: [{ kind: "price_change", windowMs: WINDOW_MS, threshold: 0.04 }],
      sinks: [{ ...sink, ratePerMinute: 600, burst: 100, groupBy: ["..."] }],
    });
  }

  it(`delivers every journaled transition exactly once across ${KILLS} kills`, async () => {
    members.push(await startMember(), await startMember(), await startMember());
    // settled for two looks in a row, a second apart (a join's handover is over)
    const settle = async (timeoutMs: number): Promise<boolean> =>
      (await waitFor(() => settled(members), timeoutMs)) && (await sleep(1_000), settled(members));
    expect(await settle(30_000)).toBe(true);
    let spikesUndetected = 0;
    let ownerKills = 0;
    let unsettled = 0;
    const misses: string[] = [];
    /** Kills and starts with their times: printed when the journal shows a problem. */
    const timeline: string[] = [];
    // a pair not spiked in the last rounds: its price_change is resolved, so a spike must be a new firing
    const order = [...PAIRS].sort(() => random() - 0.5);
    for (let round = 0; round < KILLS; round++) {
      if (!(await settle(LEASE_MS + 10_000))) unsettled += 1;
      const pair = order[round % order.length] as string;
      const owner = pollerOf(members, pair, 1_500);
      const before = hook.deliveries.items.length;
      // a step of 10 % for longer than the window: a firing on the jump, a resolve once the window passed it
      await postFault(
        simulatorUrl,
        { kind: "spike", pair, factor: round % 2 === 0 ? 1.1 : 0.9 },
        3 * WINDOW_MS,
      );
      const detected = await waitFor(
        () =>
          hook.deliveries.items
            .slice(before)
            .some((d) => d.event?.alert.labels["pair"] === pair && d.event.alert.status === "firing"),
        10_000,
      );
      if (!detected) {
        spikesUndetected += 1;
        const after = pollerOf(members, pair, 1_500);
        misses.push(
          `round ${round}: no firing for ${pair}, polled by ${owner?.id} before, ${after?.id} after`,
        );
      }
      // the spike's owner (whose resolve a survivor must then announce) or another member, a moment later
      const victim =
        owner !== undefined && random() < 0.6 ? owner : members[randomInt(random, 0, members.length - 1)]!;
      if (victim === owner) ownerKills += 1;
      await sleep(randomInt(random, 0, 1_500));
      victim.daemon.signal("SIGKILL");
      timeline.push(`${new Date().toISOString()} killed ${victim.id} (round ${round}, ${pair})`);
      members.splice(members.indexOf(victim), 1);
      members.push(await startMember());
      timeline.push(`${new Date().toISOString()} started m${started}`);
      await sleep(LEASE_MS + PERIOD_MS);
    }
    // quiet: every spike is over, its resolve (and the return's firing and resolve) announced
    await sleep(3 * WINDOW_MS + LEASE_MS + 2 * PERIOD_MS);
    const { events: journal, publisherOf } = await readClusterJournal(nats.urls);
    const journaled = journal.filter((event) => event.type === "alert").map((event) => event.seq);
    const accepted = hook.deliveries.items.filter((d) => d.answeredStatus < 300);
    const deliveredIds = new Set(accepted.map((d) => d.deliveryId));
    const { problems, summary } = checkJournal(journal);
    const counts = {
      "members killed -9": KILLS,
      "kills of the spiked pair's poller": ownerKills,
      "members started": started,
      "rounds started unsettled": unsettled,
      "journaled alert transitions": summary.alertTransitions,
      "webhook requests accepted": accepted.length,
      "spikes without a firing within 10 s": spikesUndetected,
      "alerts announced twice in a row (journal)": problems.length,
      "duplicate deliveries": accepted.length - deliveredIds.size,
      "unsigned or unjournaled deliveries": accepted.filter(
        (d) => !d.verified || !journaled.includes(Number(d.deliveryId)),
      ).length,
      lost: journaled.filter((seq) => !deliveredIds.has(String(seq))).length,
    };
    reportSuite("cluster-kills", "3 built members on nats-server, kill -9 and replace", startedAtMs, counts, [
      `lease ${LEASE_MS} ms, poll period ${PERIOD_MS} ms, ${PAIRS.length} pairs, price_change ${WINDOW_MS} ms window`,
      ...misses,
      ...problems.slice(0, 5),
      ...(problems.length === 0
        ? []
        : [...historyOf(problems.slice(0, 5), journal, publisherOf), ...timeline]),
    ]);
    expect(problems).toEqual([]);
    expect(counts).toMatchObject({
      lost: 0,
      "duplicate deliveries": 0,
      "unsigned or unjournaled deliveries": 0,
      "spikes without a firing within 10 s": 0,
      "rounds started unsettled": 0,
    });
    expect(summary.alertTransitions).toBeGreaterThanOrEqual(2 * KILLS);
  });
});
