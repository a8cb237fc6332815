// The cluster's event log with real processes: nats-server, a simulator, daemons. Every member serves the
// same events with the same seq; a client resumes on another member with `since` after its member is killed;
// a nats-server restart (file store) loses nothing.
import { afterEach, describe, expect, it } from "vitest";
import type { JournaledEvent } from "../../src/domain/events.js";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import { startDaemon, type RunningDaemon } from "../e2e/daemon.js";
import { makeWorkDir, writeConfig } from "../e2e/fixtures.js";
import { closeAllWs, connectWs, type ServerFrame, type WsClient } from "../e2e/ws-client.js";
import { memberConfig } from "./member-config.js";
import { natsServerAvailable } from "./nats.js";
import { useNatsSuite } from "./suite.js";
import { waitFor } from "../wait-for.js";

const PAIRS = syntheticPairIds(12);
const LEASE_MS = 3_000;
const available = natsServerAvailable();

/** The journaled events a client received, in arrival order. */
function journaled(client: WsClient): JournaledEvent[] {
  return client.frames.items.filter(
    (frame: ServerFrame): frame is JournaledEvent => frame.type === "alert" || frame.type === "lifecycle",
  );
}

/** What identifies an event across members: its seq and what it says. */
const identity = (event: JournaledEvent): string =>
  event.type === "alert"
    ? `${event.seq} alert ${event.alert.fingerprint} ${event.alert.status}`
    : `${event.seq} lifecycle ${event.event} ${event.at}`;

async function subscribed(url: string, since: number): Promise<WsClient> {
  const client = await connectWs(url);
  await client.subscribe({ channels: ["alerts", "lifecycle"], since });
  return client;
}

/** Wait until `client` has received an event with seq ≥ `seq`. */
async function reaches(client: WsClient, seq: number, what: string): Promise<void> {
  await client.frames.waitFor(
    (frame) => (frame.type === "alert" || frame.type === "lifecycle") && frame.seq >= seq,
    {
      timeoutMs: 20_000,
      what,
    },
  );
}

describe.skipIf(!available)("cluster event log (nats-server, daemons, one JetStream stream)", () => {
  const suite = useNatsSuite({ simulator: { seed: 7, syntheticPairs: PAIRS.length } });
  afterEach(() => closeAllWs());

  const works = new Map<string, ReturnType<typeof makeWorkDir>>();

  /** Write member `id`'s config: every pair fires `price_level above` at once, and `second` adds a rule that does too. */
  function configure(id: string, second = false): ReturnType<typeof makeWorkDir> {
    const work = works.get(id) ?? makeWorkDir();
    works.set(id, work);
    const fires = { kind: "price_level", direction: "above", threshold: 0.000001 };
    writeConfig(
      work,
      memberConfig(work, {
        id,
        upstreamUrl: suite.simulatorUrl,
        natsUrls: suite.nats.urls,
        pairs: PAIRS,
        periodMs: 1_000,
        leaseMs: LEASE_MS,
        rules: second ? [fires, { ...fires, id: "price_level_second" }] : [fires],
      }),
    );
    return work;
  }

  function startMember(id: string): Promise<RunningDaemon> {
    const work = configure(id);
    return startDaemon(work.configFile, {
      cwd: work.dir,
      simulatorUrl: suite.simulatorUrl,
      timeoutMs: 20_000,
    });
  }

  /** How many of `daemon`'s log lines say `msg`. */
  const countLogs = (daemon: RunningDaemon, msg: string): number =>
    daemon.logs.items.filter((l) => l.msg === msg).length;

  it("serves one seq on every member, resumes on another member after kill -9, and loses nothing across a nats-server restart", async () => {
    const a = await startMember("a");
    const onA = await subscribed(a.wsUrl, 0);
    // every pair fires once on a, the only member
    await onA.frames.waitFor(() => journaled(onA).filter((e) => e.type === "alert").length >= PAIRS.length, {
      timeoutMs: 30_000,
      what: "an alert for every pair on member a",
    });
    // b joins and takes its share after the handover wait, adopting its pairs' firing alerts without announcing them
    const b = await startMember("b");
    const onB = await subscribed(b.wsUrl, 0);
    await b.waitLog("cluster: adopted the alert state of new targets", 30_000);
    // a second rule on both members: each member announces it for the pairs it owns
    configure("a", true);
    configure("b", true);
    a.signal("SIGHUP");
    b.signal("SIGHUP");
    const second = (client: WsClient): JournaledEvent[] =>
      journaled(client).filter(
        (e) => e.type === "alert" && e.alert.labels["rule_id"] === "price_level_second",
      );
    await onB.frames.waitFor(() => second(onB).length >= PAIRS.length, {
      timeoutMs: 30_000,
      what: "the second rule firing for every pair, on member b",
    });
    const common = Math.max(...journaled(onB).map((e) => e.seq));
    await reaches(onA, common, `seq ${common} on member a`);
    const upTo = (events: JournaledEvent[], seq: number): string[] =>
      events.filter((e) => e.seq <= seq).map(identity);
    expect(upTo(journaled(onA), common)).toEqual(upTo(journaled(onB), common));
    expect(journaled(onA).map((e) => e.seq)).toEqual(journaled(onA).map((_, i) => i + 1));
    // b's late subscription with since=0 replayed the log from its start: the same events, the same seqs
    expect(journaled(onB).map((e) => e.seq)).toEqual(journaled(onB).map((_, i) => i + 1));
    // sinks stay per member: each member's stdout sink logs the alerts it published, not the other's
    const logged = (daemon: RunningDaemon): number[] =>
      daemon.logs.items
        .filter((l) => l["event"] === "alert")
        .map((l) => Number(l["seq"]))
        .filter((seq) => seq <= common);
    const alertSeqs = journaled(onB)
      .filter((e) => e.type === "alert" && e.seq <= common)
      .map((e) => e.seq);
    await waitFor(() => expect([...logged(a), ...logged(b)].sort((x, y) => x - y)).toEqual(alertSeqs), {
      timeout: 5_000,
      interval: 100,
    });
    expect(logged(a).length).toBeGreaterThan(0);
    expect(logged(b).length).toBeGreaterThan(0);

    // kill -9 a; b takes a's pairs and adopts their firing alerts silently; a's client resumes on b with the
    // last seq it saw, and b's next event (a reload) follows with no gap and no duplicate
    const lastOnA = Math.max(...journaled(onA).map((e) => e.seq));
    const adoptedBefore = countLogs(b, "cluster: adopted the alert state of new targets");
    a.signal("SIGKILL");
    await onA.closed;
    const resumed = await subscribed(b.wsUrl, lastOnA);
    await b.logs.waitFor(
      () => countLogs(b, "cluster: adopted the alert state of new targets") > adoptedBefore,
      { timeoutMs: 30_000, what: "b adopting a's pairs" },
    );
    const reloadsBefore = countLogs(b, "config reloaded");
    b.signal("SIGHUP");
    await b.logs.waitFor(() => countLogs(b, "config reloaded") > reloadsBefore, {
      timeoutMs: 10_000,
      what: "b's reload",
    });
    await onB.frames.waitFor(
      () =>
        journaled(onB).some(
          (e) => e.seq > lastOnA && e.type === "lifecycle" && e.event === "config_reloaded",
        ),
      { timeoutMs: 20_000, what: "b's config_reloaded after the kill" },
    );
    // the handover announced nothing: no alert event after a died (a's firing alerts moved to b as they were)
    expect(journaled(onB).filter((e) => e.seq > lastOnA && e.type === "alert")).toEqual([]);
    const after = Math.max(...journaled(onB).map((e) => e.seq));
    await reaches(resumed, after, `seq ${after} on the resumed client`);
    const stitched = [...journaled(onA), ...journaled(resumed)].filter((e) => e.seq <= after);
    expect(journaled(resumed)[0]?.seq).toBe(lastOnA + 1);
    expect(stitched.map(identity)).toEqual(upTo(journaled(onB), after));

    // restart nats-server (file store) with an event published meanwhile (b's reload); a new member reads all back
    const node = suite.nats.nodes[0];
    if (node === undefined) throw new Error("no nats node");
    const reloadsLogged = countLogs(b, "config reloaded");
    const reloadsServed = (): number =>
      journaled(onB).filter((e) => e.type === "lifecycle" && e.event === "config_reloaded").length;
    const servedBefore = reloadsServed();
    await node.kill();
    b.signal("SIGHUP");
    await b.logs.waitFor(() => countLogs(b, "config reloaded") > reloadsLogged, {
      timeoutMs: 5_000,
      what: "b's reload while nats-server is down",
    });
    await node.restart();
    await onB.frames.waitFor(() => reloadsServed() > servedBefore, {
      timeoutMs: 30_000,
      what: "b's config_reloaded event, published once nats-server was back",
    });
    const c = await startMember("c");
    const onC = await subscribed(c.wsUrl, 0);
    const last = Math.max(...journaled(onB).map((e) => e.seq));
    await reaches(onC, last, `seq ${last} on member c`);
    expect(upTo(journaled(onC), last)).toEqual(upTo(journaled(onB), last));
    console.info(
      `cluster journal: ${common} events on both members, a killed at seq ${lastOnA}, resumed on b to ${after}, ${last} read back by a new member after the nats-server restart`,
    );
    expect(journaled(onC).map((e) => e.seq)).toEqual(journaled(onC).map((_, i) => i + 1));
  }, 180_000);
});
