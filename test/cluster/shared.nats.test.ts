// What the members share besides targets, with real processes (nats-server, a simulator, two daemons): a silence
// made on one member mutes an alert another member publishes (re-announced once, by its owner), a silence's end is
// announced once, /api/v1/status lists the members, their keys and leases and the shared config generation, and a
// member that loses NATS raises cluster_error on its stdout and WebSocket and resolves it when NATS is back.
import { afterEach, describe, expect, it } from "vitest";
import type { JournaledEvent } from "../../src/domain/events.js";
import type { StatusView } from "../../src/http/api/status-schema.js";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import { startDaemon, type RunningDaemon } from "../e2e/daemon.js";
import { makeWorkDir, writeConfig, type WorkDir } from "../e2e/fixtures.js";
import { closeAllWs, connectWs, type ServerFrame, type WsClient } from "../e2e/ws-client.js";
import { memberConfig } from "./member-config.js";
import { natsServerAvailable } from "./nats.js";
import { useNatsSuite } from "./suite.js";

const PAIRS = syntheticPairIds(8);
const LEASE_MS = 3_000;
const available = natsServerAvailable();
const FIRES = { kind: "price_level", direction: "above", threshold: 0.000001 };

function journaled(client: WsClient): JournaledEvent[] {
  return client.frames.items.filter(
    (frame: ServerFrame): frame is JournaledEvent => frame.type === "alert" || frame.type === "lifecycle",
  );
}

async function api(daemon: RunningDaemon, method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${daemon.httpUrl}/api/v1${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as unknown;
}

const status = async (daemon: RunningDaemon): Promise<StatusView> =>
  (await api(daemon, "GET", "/status")) as StatusView;

/** Poll `read` until `holds` accepts its value (or fail after `timeoutMs`). */
async function until<T>(
  read: () => Promise<T>,
  holds: (value: T) => boolean,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await read();
    if (holds(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
}

const silence = (matchers: unknown[], endsInMs: number, comment: string): unknown => ({
  matchers,
  startsAt: new Date().toISOString(),
  endsAt: new Date(Date.now() + endsInMs).toISOString(),
  createdBy: "test",
  comment,
});

describe.skipIf(!available)("cluster shared state (nats-server, two daemons)", () => {
  const suite = useNatsSuite({ simulator: { seed: 11, syntheticPairs: PAIRS.length } });
  const works = new Map<string, WorkDir>();
  afterEach(() => closeAllWs());

  function configure(id: string, rules: readonly unknown[]): WorkDir {
    const work = works.get(id) ?? makeWorkDir();
    works.set(id, work);
    writeConfig(
      work,
      memberConfig(work, {
        id,
        upstreamUrl: suite.simulatorUrl,
        natsUrls: suite.nats.urls,
        pairs: PAIRS,
        periodMs: 1_000,
        leaseMs: LEASE_MS,
        rules,
      }),
    );
    return work;
  }

  function startMember(id: string): Promise<RunningDaemon> {
    const work = configure(id, [FIRES]);
    return startDaemon(work.configFile, {
      cwd: work.dir,
      simulatorUrl: suite.simulatorUrl,
      timeoutMs: 20_000,
    });
  }

  it("shares silences (muted once, by the owner; an end announced once), lists members and leases, shares the config generation", async () => {
    const a = await startMember("a");
    const b = await startMember("b");
    // both members see both, each with its keys, and the keys cover every pair once
    const seen = await until(
      () => status(a),
      (s) =>
        s.cluster?.members.length === 2 &&
        s.cluster.members.reduce((n, m) => n + m.keys.length, 0) === PAIRS.length &&
        s.cluster.members.every((m) => m.keys.length > 0),
      30_000,
      "a's status listing both members and every key",
    );
    const members = seen.cluster?.members ?? [];
    expect(members.map((m) => m.memberId)).toEqual(["a", "b"]);
    expect(members.map((m) => m.self)).toEqual([true, false]);
    for (const m of members) {
      expect(m.targets).toBe(m.keys.length);
      expect(m.leaseRevision).toBeGreaterThan(0);
      expect(Date.parse(m.leaseExpiresAt)).toBeGreaterThan(Date.now() - LEASE_MS);
    }
    const onB = (await status(b)).cluster;
    expect(onB?.members.map((m) => m.memberId)).toEqual(["a", "b"]);
    expect(onB?.leaseRevision).toBe(members[1]?.leaseRevision);

    // an alert b publishes (a pair b owns), firing on both members' WebSocket
    const pairOfB = (members[1]?.keys[0] ?? "").replace(/^pair:/, "");
    const client = await connectWs(a.wsUrl);
    await client.subscribe({ channels: ["alerts", "lifecycle"], since: 0 });
    const firingOf =
      (pair: string) =>
      (e: JournaledEvent): boolean =>
        e.type === "alert" && e.alert.labels["pair"] === pair && e.alert.status === "firing";
    await client.frames.waitFor(() => journaled(client).some(firingOf(pairOfB)), {
      timeoutMs: 30_000,
      what: `the alert of ${pairOfB} on a's WebSocket`,
    });

    // a silence made on a: b re-announces its alert with silencedBy, and only b does (once)
    const { silenceID } = (await api(
      a,
      "POST",
      "/silences",
      silence([{ name: "pair", value: pairOfB, isRegex: false, isEqual: true }], 60_000, "mute b's pair"),
    )) as { silenceID: string };
    const mutedOf = (e: JournaledEvent): boolean =>
      firingOf(pairOfB)(e) && e.type === "alert" && (e.alert.silencedBy ?? []).includes(silenceID);
    await client.frames.waitFor(() => journaled(client).some(mutedOf), {
      timeoutMs: 15_000,
      what: `b's re-announcement of ${pairOfB} muted by a's silence`,
    });
    const listedOnB = (await api(b, "GET", `/silences/${silenceID}`)) as { status: { state: string } };
    expect(listedOnB.status.state).toBe("active");

    // a short silence made on b ends by itself: its end is announced once in the shared log
    const short = (await api(
      b,
      "POST",
      "/silences",
      silence([{ name: "pair", value: "NO/SUCH", isRegex: false, isEqual: true }], 3_000, "short"),
    )) as { silenceID: string };
    const endedOf = (e: JournaledEvent): boolean =>
      e.type === "lifecycle" &&
      e.event === "silence_expired" &&
      e.detail?.["id"] === short.silenceID &&
      e.detail["cause"] === "ended";
    await client.frames.waitFor(() => journaled(client).some(endedOf), {
      timeoutMs: 20_000,
      what: "the short silence's end",
    });
    // expiring a's silence on b (DELETE) unmutes on both; give any second announcement time to arrive
    await api(b, "DELETE", `/silences/${silenceID}`);
    const unmutedOf = (e: JournaledEvent): boolean =>
      firingOf(pairOfB)(e) &&
      e.type === "alert" &&
      e.alert.reason === "repeat" &&
      e.alert.silencedBy === undefined;
    await client.frames.waitFor(() => journaled(client).some(unmutedOf), {
      timeoutMs: 15_000,
      what: `${pairOfB} re-announced unmuted after the silence expired on b`,
    });
    // a learns of the expiry through its watch of the bucket, independently of the journal that carried b's repeat
    await until(
      async () =>
        ((await api(a, "GET", `/silences/${silenceID}`)) as { status: { state: string } }).status.state,
      (state) => state === "expired",
      3_000,
      "a listing the silence b expired as expired",
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(journaled(client).filter(endedOf)).toHaveLength(1);
    expect(journaled(client).filter(mutedOf)).toHaveLength(1);
    expect(journaled(client).filter(unmutedOf)).toHaveLength(1);
    // no alert of a's pairs was re-announced by b, nor b's by a: one repeat per silence change, for b's pair only
    const repeats = journaled(client).filter((e) => e.type === "alert" && e.alert.reason === "repeat");
    expect(repeats.every((e) => e.type === "alert" && e.alert.labels["pair"] === pairOfB)).toBe(true);

    // the config generation: b reloads a changed config, both say generation 1, a says it runs another config
    const first = await until(
      () => status(a),
      (s) => s.cluster?.config.generation === 0,
      10_000,
      "generation 0",
    );
    expect(first.configGeneration).toBe(0);
    expect(first.cluster?.config.current).toBe(true);
    configure("b", [FIRES, { ...FIRES, id: "second" }]);
    b.signal("SIGHUP");
    const onBAfter = await until(
      () => status(b),
      (s) => s.configGeneration === 1,
      10_000,
      "b at generation 1",
    );
    expect(onBAfter.cluster?.config).toMatchObject({ generation: 1, current: true, loadedBy: "b" });
    const onAAfter = await until(
      () => status(a),
      (s) => s.configGeneration === 1,
      10_000,
      "a at generation 1",
    );
    expect(onAAfter.cluster?.config).toMatchObject({ generation: 1, current: false, loadedBy: "b" });
    expect(onAAfter.cluster?.config.hash).not.toBe(onBAfter.cluster?.config.hash);
  }, 180_000);

  it("raises cluster_error on stdout and the WebSocket while NATS is lost, and resolves it when NATS is back", async () => {
    const a = await startMember("a2");
    await until(
      () => status(a),
      (s) => s.cluster?.leaseRevision !== null,
      20_000,
      "a2's lease",
    );
    const client = await connectWs(a.wsUrl);
    await client.subscribe({ channels: ["alerts"] });
    const node = suite.nats.nodes[0];
    if (node === undefined) throw new Error("no nats node");
    await node.kill();
    const fired = await a.logs.waitFor(
      (line) => (line["alert"] as { rule?: string; status?: string } | undefined)?.rule === "cluster_error",
      { timeoutMs: 20_000, what: "cluster_error firing on a2's stdout" },
    );
    expect(fired["alert"]).toMatchObject({
      status: "firing",
      labels: { member: "a2" },
      severity: "critical",
    });
    await client.frames.waitFor(
      (f) => f.type === "alert" && f.alert.rule === "cluster_error" && f.alert.status === "firing",
      { timeoutMs: 5_000, what: "cluster_error firing on a2's WebSocket" },
    );
    const firing = (await api(a, "GET", "/alerts")) as { alerts?: { rule: string }[] } | { rule: string }[];
    expect(JSON.stringify(firing)).toContain("cluster_error");
    await node.restart();
    const resolved = await a.logs.waitFor(
      (line) => {
        const alert = line["alert"] as { rule?: string; status?: string } | undefined;
        return alert?.rule === "cluster_error" && alert.status === "resolved";
      },
      { timeoutMs: 30_000, what: "cluster_error resolved on a2's stdout" },
    );
    expect(resolved["alert"]).toMatchObject({ labels: { member: "a2" } });
    await client.frames.waitFor(
      (f) => f.type === "alert" && f.alert.rule === "cluster_error" && f.alert.status === "resolved",
      { timeoutMs: 5_000, what: "cluster_error resolved on a2's WebSocket" },
    );
    const firingLines = a.logs.items.filter(
      (line) => (line["alert"] as { rule?: string; status?: string } | undefined)?.rule === "cluster_error",
    );
    expect(firingLines.map((line) => (line["alert"] as { status: string }).status)).toEqual([
      "firing",
      "resolved",
    ]);
  }, 120_000);
});
