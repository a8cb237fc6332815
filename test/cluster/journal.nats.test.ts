// The cluster's event log with real processes: nats-server, a simulator, daemons. Every member serves the
// same events with the same seq; a client resumes on another member with `since` after its member is killed;
// a nats-server restart (file store) loses nothing.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { JournaledEvent } from "../../src/domain/events.js";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import { ensureBuilt, killAllDaemons, spawnDaemon, startDaemon, type RunningDaemon } from "../e2e/daemon.js";
import { makeWorkDir, removeWorkDirs, writeConfig } from "../e2e/fixtures.js";
import { closeAllWs, connectWs, type ServerFrame, type WsClient } from "../e2e/ws-client.js";
import { natsServerAvailable, startNats, type NatsCluster } from "./nats.js";

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
  let nats: NatsCluster;
  let simulatorUrl: string;

  beforeAll(async () => {
    ensureBuilt();
    nats = await startNats(1);
    const work = makeWorkDir();
    const sim = spawnDaemon(
      ["simulate", "--port", "0", "--seed", "7", "--synthetic-pairs", String(PAIRS.length)],
      {
        cwd: work.dir,
      },
    );
    const line = await sim.logs.waitFor((l) => /listening on http/.test(l.raw), {
      timeoutMs: 15_000,
      what: "the simulator's listening line",
    });
    simulatorUrl = /listening on (http\S+)/.exec(line.raw)?.[1] ?? "";
  }, 180_000);
  afterEach(() => closeAllWs());
  afterAll(async () => {
    await killAllDaemons();
    await nats.close();
    removeWorkDirs();
  });

  /** A member whose every pair fires `price_level above` at once (so each member publishes alerts for its share). */
  function startMember(id: string): Promise<RunningDaemon> {
    const work = makeWorkDir();
    writeConfig(work, {
      upstream: { url: simulatorUrl, retry: { maxAttempts: 1 } },
      monitors: {
        offchain: PAIRS.map((pair) => ({ pair, periodMs: 1_000 })),
        onchain: [],
        publishers: [],
        funding: [],
        vaults: [],
        warmup: { enabled: false },
      },
      rules: [{ kind: "price_level", direction: "above", threshold: 0.000001 }],
      sinks: [],
      state: { dir: work.stateDir },
      cluster: { nats: { servers: nats.urls }, memberId: id, leaseMs: LEASE_MS, experimental: true },
      shutdown: { drainTimeoutMs: 2_000 },
    });
    return startDaemon(work.configFile, { cwd: work.dir, simulatorUrl, timeoutMs: 20_000 });
  }

  it("serves one seq on every member, resumes on another member after kill -9, and loses nothing across a nats-server restart", async () => {
    const a = await startMember("a");
    const b = await startMember("b");
    const onA = await subscribed(a.wsUrl, 0);
    const onB = await subscribed(b.wsUrl, 0);
    // every pair fires once, on whichever member owns it: both members' alerts and both started events
    await onB.frames.waitFor(() => journaled(onB).filter((e) => e.type === "alert").length >= PAIRS.length, {
      timeoutMs: 30_000,
      what: "an alert for every pair on member b",
    });
    // b takes its share of the pairs after the handover wait, and announces them again (alert state does not move yet)
    await b.logs.waitFor((l) => l["event"] === "alert", {
      timeoutMs: 30_000,
      what: "an alert published by member b",
    });
    const common = Math.max(...journaled(onB).map((e) => e.seq));
    await reaches(onA, common, `seq ${common} on member a`);
    const upTo = (events: JournaledEvent[], seq: number): string[] =>
      events.filter((e) => e.seq <= seq).map(identity);
    expect(upTo(journaled(onA), common)).toEqual(upTo(journaled(onB), common));
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
    await vi.waitFor(() => expect([...logged(a), ...logged(b)].sort((x, y) => x - y)).toEqual(alertSeqs), {
      timeout: 5_000,
      interval: 100,
    });
    expect(logged(a).length).toBeGreaterThan(0);
    expect(logged(b).length).toBeGreaterThan(0);

    // kill -9 a; its client resumes on b with the last seq it saw: b's new "first" alerts for a's pairs follow
    const lastOnA = Math.max(...journaled(onA).map((e) => e.seq));
    a.signal("SIGKILL");
    await onA.closed;
    const resumed = await subscribed(b.wsUrl, lastOnA);
    // a's firing alerts (a died holding them) are announced again by b, which takes a's pairs over
    const lastStatusOnA = new Map<string, string>();
    for (const line of a.logs.items)
      if (line["event"] === "alert") {
        const alert = line["alert"] as { fingerprint: string; status: string };
        lastStatusOnA.set(alert.fingerprint, alert.status);
      }
    const heldByA = [...lastStatusOnA].filter(([, status]) => status === "firing").map(([fp]) => fp);
    expect(heldByA.length).toBeGreaterThan(0);
    const announcedSince = (seq: number): Set<string> =>
      new Set(
        journaled(onB).flatMap((e) => (e.type === "alert" && e.seq > seq ? [e.alert.fingerprint] : [])),
      );
    await onB.frames.waitFor(() => heldByA.every((fp) => announcedSince(lastOnA).has(fp)), {
      timeoutMs: 30_000,
      what: "b's alerts for the pairs it took over from a",
    });
    const after = Math.max(...journaled(onB).map((e) => e.seq));
    await reaches(resumed, after, `seq ${after} on the resumed client`);
    const stitched = [...journaled(onA), ...journaled(resumed)].filter((e) => e.seq <= after);
    expect(journaled(resumed)[0]?.seq).toBe(lastOnA + 1);
    expect(stitched.map(identity)).toEqual(upTo(journaled(onB), after));

    // restart nats-server (file store) with an event published meanwhile (b's reload); a new member reads all back
    const node = nats.nodes[0];
    if (node === undefined) throw new Error("no nats node");
    await node.kill();
    b.signal("SIGHUP");
    await b.waitLog("config reloaded", 5_000);
    await node.restart();
    await onB.frames.waitFor((frame) => frame.type === "lifecycle" && frame.event === "config_reloaded", {
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
