// The pure parts of what cluster members share: the config generation's next record and hash, the cluster_error
// transitions and their local announcement, the silence bucket's keys and values, the daemon alerts a member published,
// and the status and readiness a member's standby shows in.
import { pino } from "pino";
import { filter } from "rxjs";
import { describe, expect, it } from "vitest";
import {
  clusterErrorTransition,
  createClusterErrorAlert,
  withLocalAlerts,
} from "../../src/cluster/cluster-error-alert.js";
import { withClusterReasons } from "../../src/cluster/cluster-mode.js";
import { clusterStatusView } from "../../src/cluster/cluster-shared.js";
import { configHash, nextGenerationRecord } from "../../src/cluster/config-generation.js";
import type { ClusterStatus } from "../../src/cluster/member.js";
import { createPublishedAlerts } from "../../src/cluster/published-alerts.js";
import type { SharedBuckets } from "../../src/cluster/shared-buckets.js";
import {
  claimKeyOf,
  createSilenceSync,
  silenceKeyOf,
  silenceOfText,
} from "../../src/cluster/silence-sync.js";
import type { BusEvent } from "../../src/domain/events.js";
import type { Silence } from "../../src/domain/silence.js";
import { createEventHub } from "../../src/pipeline/event-hub.js";
import { createJournal } from "../../src/state/journal.js";
import { loadWith } from "../config/helpers.js";
import { HOUR_MS, T0, iso, silence } from "../domain/helpers.js";
import { nthAlert, resolvedOf } from "../sinks/chatops/helpers.js";

describe("shared config generation", () => {
  const loaded = { hash: "h1", memberId: "a", atMs: 5 };

  it("starts at 0, stays while the cluster runs the same config, and advances for another", () => {
    const first = nextGenerationRecord(null, loaded);
    expect(first).toEqual({ generation: 0, hash: "h1", memberId: "a", atMs: 5 });
    expect(nextGenerationRecord(first, { ...loaded, memberId: "b" })).toBeNull();
    expect(nextGenerationRecord(first, { hash: "h2", memberId: "b", atMs: 9 })).toEqual({
      generation: 1,
      hash: "h2",
      memberId: "b",
      atMs: 9,
    });
  });

  it("hashes what members share, not what differs between them (port, state dir)", () => {
    const load = (content: unknown): Parameters<typeof configHash>[0] =>
      loadWith(content, { defaultFile: null }).config;
    const a = load({ state: { dir: "state-a" }, server: { port: 1 } });
    const b = load({ state: { dir: "state-b" }, server: { port: 2 } });
    expect(configHash(a)).toBe(configHash(b));
    expect(configHash(a)).toMatch(/^[0-9a-f]{16}$/);
    const rule = { kind: "price_level", direction: "above", threshold: 1 };
    expect(configHash(load({ state: { dir: "state-a" }, rules: [rule] }))).not.toBe(configHash(a));
  });
});

describe("cluster_error alert", () => {
  it("fires once when NATS is lost, stays quiet while it stays lost, resolves once when it answers", () => {
    const firing = clusterErrorTransition(null, "NATS did not answer within 1500 ms", "m1", T0);
    expect(firing).toMatchObject({
      status: "firing",
      rule: "cluster_error",
      severity: "critical",
      labels: { member: "m1" },
      reason: "first",
      startsAt: new Date(T0).toISOString(),
    });
    if (firing === null) throw new Error("expected a firing alert");
    expect(clusterErrorTransition(firing, "another error", "m1", T0 + 1_000)).toBeNull();
    const resolved = clusterErrorTransition(firing, null, "m1", T0 + 5_000);
    expect(resolved).toMatchObject({
      fingerprint: firing.fingerprint,
      status: "resolved",
      reason: "resolved",
      startsAt: firing.startsAt,
      endsAt: new Date(T0 + 5_000).toISOString(),
    });
    expect(clusterErrorTransition(null, null, "m1", T0)).toBeNull();
  });

  it("is announced on the member's bus only: not journaled, in the firing set, and on a filtered view", () => {
    const journal = createJournal(100);
    const forwarded: unknown[] = [];
    const hub = createEventHub({
      journal,
      nowMs: () => T0,
      version: "test",
      forward: (event) => forwarded.push(event),
    });
    // the view a member's own sinks get: nothing journaled passes it here
    const view = Object.assign(Object.create(hub) as typeof hub, {
      events$: hub.events$.pipe(filter((event) => event.type === "price")),
    });
    const seen: BusEvent[] = [];
    withLocalAlerts(view, hub).events$.subscribe((event) => seen.push(event));
    let error: string | null = "connection refused";
    const alert = createClusterErrorAlert({ memberId: "m1", error: () => error, hub, nowMs: () => T0 });
    alert.check();
    alert.check();
    expect(hub.activeAlerts().map((a) => a.rule)).toEqual(["cluster_error"]);
    error = null;
    alert.check();
    expect(
      seen.map((e) => (e.type === "alert" ? `${e.alert.rule} ${e.alert.status} ${e.seq}` : e.type)),
    ).toEqual(["cluster_error firing 0", "cluster_error resolved 0"]);
    expect(forwarded).toEqual([]);
    expect(journal.lastSeq).toBe(0);
    expect(hub.activeAlerts()).toEqual([]);
  });
});

describe("silence bucket", () => {
  it("keys any id within KV's key characters, and reads back only valid, stored silences", () => {
    expect(silenceKeyOf("r1-1")).toMatch(/^silence\.[A-Za-z0-9_-]+$/);
    expect(silenceKeyOf("a b/c")).toMatch(/^silence\.[A-Za-z0-9_-]+$/);
    expect(claimKeyOf("ended:x:1")).toMatch(/^claim\.[A-Za-z0-9_-]+$/);
    const stored = silence("s1", T0, T0 + HOUR_MS);
    expect(silenceOfText(JSON.stringify(stored))).toEqual(stored);
    expect(silenceOfText("{")).toBeUndefined();
    expect(silenceOfText(JSON.stringify({ ...stored, matchers: [] }))).toBeUndefined();
    expect(silenceOfText(JSON.stringify({ ...stored, id: "maintenance:nightly" }))).toBeUndefined();
  });

  /** A sync over a silences bucket whose writes wait until released, in order; its watch never yields; no start(). */
  function syncOverHeldBucket(): {
    readonly sync: ReturnType<typeof createSilenceSync>;
    readonly written: { readonly key: string; readonly silence: Silence }[];
    release(): Promise<void>;
  } {
    const written: { key: string; silence: Silence }[] = [];
    const releases: (() => void)[] = [];
    const write = (key: string, value: Uint8Array): Promise<number> =>
      new Promise<number>((resolve) => {
        releases.push(() => {
          written.push({ key, silence: JSON.parse(new TextDecoder().decode(value)) as Silence });
          resolve(written.length);
        });
      });
    const kv = {
      get: (key: string) => {
        const last = written.filter((w) => w.key === key).at(-1);
        return Promise.resolve(
          last === undefined
            ? null
            : { operation: "PUT", revision: written.length, string: () => JSON.stringify(last.silence) },
        );
      },
      create: write,
      update: write,
      watch: () => new Promise(() => undefined),
    };
    const buckets = { silences: kv } as unknown as SharedBuckets; // only the silences bucket is used
    const sync = createSilenceSync({
      buckets: () => buckets,
      silencer: () => ({ list: () => [], merge: () => true }),
      logger: pino({ level: "silent" }),
      nowMs: () => T0,
      invalid: () => undefined,
    });
    const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    return {
      sync,
      written,
      /** Let the next write waiting in the bucket through (once one waits), and what it sets going run. */
      release: async () => {
        for (let turns = 0; releases.length === 0; turns++) {
          if (turns === 100) throw new Error("no write is waiting in the bucket");
          await settle();
        }
        releases.shift()?.();
        await settle();
      },
    };
  }

  it("writes a silence stored while a write is under way as soon as that write ends, not a pass later", async () => {
    const { sync, written, release } = syncOverHeldBucket();
    sync.stored(silence("s1", T0, T0 + HOUR_MS));
    sync.stored(silence("s2", T0, T0 + HOUR_MS)); // while s1's write is under way
    await release();
    await release();
    expect(written.map((w) => w.key)).toEqual([silenceKeyOf("s1"), silenceKeyOf("s2")]);
    sync.stop();
  });

  it("writes a newer version of a silence stored while its older version is being written (an expiry is not lost)", async () => {
    const { sync, written, release } = syncOverHeldBucket();
    const active = silence("s1", T0, T0 + HOUR_MS);
    const expired = {
      ...active,
      endsAt: new Date(T0 + 1_000).toISOString(),
      updatedAt: new Date(T0 + 1_000).toISOString(),
    };
    sync.stored(active);
    sync.stored(expired); // while the active version's write is under way
    await release();
    await release();
    expect(written.map((w) => w.silence.endsAt)).toEqual([active.endsAt, expired.endsAt]);
    sync.stop();
  });

  it("writes each dirty silence's latest version at its turn: one stored again while another is written", async () => {
    const { sync, written, release } = syncOverHeldBucket();
    const third = silence("s3", T0, T0 + HOUR_MS);
    sync.stored(silence("s1", T0, T0 + HOUR_MS));
    sync.stored(silence("s2", T0, T0 + HOUR_MS)); // s2 and s3 wait for the next pass, together
    sync.stored(third);
    await release(); // s1 written: the next pass writes s2
    sync.stored({ ...third, comment: "later", updatedAt: new Date(T0 + 1_000).toISOString() });
    await release();
    await release();
    await new Promise((resolve) => setImmediate(resolve));
    // the stale s3 is never written (read at its turn, not when the pass began)
    expect(written.map((w) => [w.key, w.silence.comment])).toEqual([
      [silenceKeyOf("s1"), "test silence s1"],
      [silenceKeyOf("s2"), "test silence s2"],
      [silenceKeyOf("s3"), "later"],
    ]);
    sync.stop();
  });

  it("writes nothing once stopped, not even what a pass under way had left, and resumes on start", async () => {
    const { sync, written, release } = syncOverHeldBucket();
    const keys = (): string[] => written.map((w) => w.key);
    sync.stored(silence("s1", T0, T0 + HOUR_MS));
    sync.stored(silence("s2", T0, T0 + HOUR_MS)); // s2 and s3 wait for the next pass, together
    sync.stored(silence("s3", T0, T0 + HOUR_MS));
    await release(); // s1 written: the next pass writes s2, then would write s3
    sync.stop();
    sync.stored(silence("s4", T0, T0 + HOUR_MS));
    await release(); // s2's write, under way before the stop, ends
    await new Promise((resolve) => setImmediate(resolve));
    expect(keys()).toEqual([silenceKeyOf("s1"), silenceKeyOf("s2")]);
    sync.start(60_000);
    await release();
    await release();
    expect(keys()).toEqual(["s1", "s2", "s3", "s4"].map(silenceKeyOf));
    sync.stop();
  });
  /** A sync over a silences bucket already holding `held` (revision 1): what it writes and what it merges. */
  async function pushOver(held: Silence, mine: Silence): Promise<{ written: Silence[]; merged: Silence[] }> {
    const written: Silence[] = [];
    const merged: Silence[] = [];
    const update = (_key: string, value: Uint8Array): Promise<number> => {
      written.push(JSON.parse(new TextDecoder().decode(value)) as Silence);
      return Promise.resolve(2);
    };
    const kv = {
      get: () => Promise.resolve({ operation: "PUT", revision: 1, string: () => JSON.stringify(held) }),
      create: update,
      update,
      watch: () => new Promise(() => undefined),
    };
    const buckets = { silences: kv } as unknown as SharedBuckets; // only the silences bucket is used
    const sync = createSilenceSync({
      buckets: () => buckets,
      silencer: () => ({
        list: () => [],
        merge: (silence) => {
          merged.push(silence);
          return true;
        },
      }),
      logger: pino({ level: "silent" }),
      nowMs: () => T0,
      invalid: () => undefined,
    });
    sync.stored(mine);
    for (let turns = 0; turns < 10; turns++) await new Promise((resolve) => setImmediate(resolve));
    sync.stop();
    return { written, merged };
  }

  it("on a same-millisecond tie with the bucket's version, writes its own only when it wins the tie-break", async () => {
    const base = silence("s1", T0, T0 + HOUR_MS);
    const fromA = { ...base, comment: "a" };
    const fromB = { ...base, comment: "b" };
    // b wins: the member holding b replaces the bucket's a (and the member holding a takes b from the watch)
    expect(await pushOver(fromA, fromB)).toEqual({ written: [fromB], merged: [] });
    // a loses: the member holding a takes the bucket's b instead of keeping its own
    expect(await pushOver(fromB, fromA)).toEqual({ written: [], merged: [fromB] });
  });

  it("takes from the watch every valid version however far ahead of its clock, and skips (counted) an invalid one", async () => {
    const merged: Silence[] = [];
    let invalid = 0;
    const near = { ...silence("s1", T0, T0 + HOUR_MS), updatedAt: iso(T0 + 1) };
    // a member whose clock runs a day ahead: the other members order its versions alike, so they converge
    const ahead = { ...silence("s2", T0, T0 + HOUR_MS), updatedAt: iso(T0 + 24 * HOUR_MS) };
    async function* entries(): AsyncGenerator<unknown> {
      for (const [key, text] of [
        [silenceKeyOf(near.id), JSON.stringify(near)],
        [silenceKeyOf("s3"), "{not a silence"],
        [silenceKeyOf(ahead.id), JSON.stringify(ahead)],
      ])
        yield { operation: "PUT", key, revision: 1, string: () => text };
      await new Promise(() => undefined); // the watch stays open
    }
    const kv = { watch: () => Promise.resolve(entries()) };
    const buckets = { silences: kv } as unknown as SharedBuckets; // only the silences bucket's watch is used
    const sync = createSilenceSync({
      buckets: () => buckets,
      silencer: () => ({
        list: () => [],
        merge: (version) => {
          merged.push(version);
          return true;
        },
      }),
      logger: pino({ level: "silent" }),
      nowMs: () => T0,
      invalid: () => invalid++,
    });
    sync.start(60_000);
    for (let turns = 0; turns < 10; turns++) await new Promise((resolve) => setImmediate(resolve));
    sync.stop();
    expect(merged).toEqual([near, ahead]);
    expect(invalid).toBe(1);
  });

  it("never writes over a bucket version far ahead of its clock: takes it, as every member does", async () => {
    const mine = silence("s1", T0, T0 + HOUR_MS);
    // shortened by a member whose clock runs a day ahead: this member, behind, must not undo the change
    const editedAhead = { ...mine, endsAt: iso(T0 + 60_000), updatedAt: iso(T0 + 24 * HOUR_MS) };
    expect(await pushOver(editedAhead, mine)).toEqual({ written: [], merged: [editedAhead] });
  });
});

describe("published daemon alerts", () => {
  it("holds the daemon alerts this process sent while they fire, and no engine alert", () => {
    const published = createPublishedAlerts();
    const sinkError = nthAlert(1, { rule: "sink_error", labels: { sink: "ops" } });
    const price = nthAlert(2);
    published.note({ type: "alert", alert: sinkError });
    published.note({ type: "alert", alert: price });
    expect(published.has(sinkError.fingerprint)).toBe(true);
    expect(published.has(price.fingerprint)).toBe(false);
    published.note({ type: "alert", alert: resolvedOf(sinkError) });
    expect(published.has(sinkError.fingerprint)).toBe(false);
  });
});

describe("cluster status and readiness of a member standing by", () => {
  const config = { generation: 1, hash: "h1", clusterHash: "h1", current: true, loadedBy: "a" };
  const member = (memberId: string, standby: boolean): ClusterStatus["members"][number] => ({
    memberId,
    incarnation: `${memberId}-1`,
    expiresAtMs: T0,
    revision: 3,
    keys: standby ? [] : ["pair:BTC/USD"],
    targets: standby ? 0 : 2,
    standby,
  });
  const status = (standby: boolean, error: string | null = null): ClusterStatus => ({
    memberId: "a",
    leaseRevision: 3,
    leaseExpiresAtMs: T0,
    members: [member("a", standby), member("b", false)],
    ownedKeys: standby ? 0 : 1,
    pendingKeys: 0,
    standby,
    error,
  });
  const ready = { ready: true, reasons: [] };

  it("shows whether this member and each other member stands by", () => {
    const view = clusterStatusView(status(true), config);
    expect(view).toMatchObject({ memberId: "a", standby: true, config });
    expect(view.members.map(({ memberId, self, standby }) => ({ memberId, self, standby }))).toEqual([
      { memberId: "a", self: true, standby: true },
      { memberId: "b", self: false, standby: false },
    ]);
    expect(clusterStatusView(status(false), config).standby).toBe(false);
  });

  it("is not ready while it stands by under a valid lease, with one reason whether starting or stood down", () => {
    const readiness = (of: ClusterStatus, leaseValid = true) =>
      withClusterReasons(ready, { status: () => of, leaseValid: () => leaseValid });
    expect(readiness(status(false))).toEqual(ready);
    expect(readiness(status(true))).toEqual({
      ready: false,
      reasons: ["cluster: standing by until its membership view is current (polling nothing)"],
    });
    const stoodDown = "membership not confirmed for 3000 ms: standing by";
    expect(readiness(status(true, stoodDown))).toEqual({ ready: false, reasons: [`cluster: ${stoodDown}`] });
    expect(readiness(status(true), false).reasons).toEqual(["cluster: no valid lease (polling nothing)"]);
  });
});
