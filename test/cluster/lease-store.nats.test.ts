// The lease bucket against a real nats-server: create, compare-and-set renewal, removal that a renewal beats, and the watch.
import { beforeAll, describe, expect, it } from "vitest";
import { openLeaseStore, type LeaseChange, type LeaseStore } from "../../src/cluster/lease-store.js";
import { natsServerAvailable } from "./nats.js";
import { useNatsSuite } from "./suite.js";

const available = natsServerAvailable();

describe.skipIf(!available)("lease store (nats-server)", () => {
  const suite = useNatsSuite();
  let store: LeaseStore;

  beforeAll(async () => {
    store = suite.closeAtEnd(
      await openLeaseStore(
        { servers: suite.nats.urls, user: "", password: "", token: "", replicas: 1 },
        { name: "test", timeoutMs: 2_000 },
      ),
    );
  });

  it("creates a record once, renews it by revision only, and removes it by revision only", async () => {
    const lease = { memberId: "a", incarnation: "1", expiresAtMs: 1_000 };
    const first = await store.create(lease);
    expect(first).toBeTypeOf("number");
    expect(await store.create({ ...lease, incarnation: "2" })).toBeNull();
    const second = await store.renew({ ...lease, expiresAtMs: 2_000 }, first ?? 0);
    expect(second).toBeGreaterThan(first ?? 0);
    // a stale revision (a member back from SIGSTOP) loses
    expect(await store.renew(lease, first ?? 0)).toBeNull();
    expect(await store.list()).toEqual([{ ...lease, expiresAtMs: 2_000, revision: second }]);
    expect(await store.remove("a", first ?? 0)).toBe(false);
    expect(await store.remove("a", second ?? 0)).toBe(true);
    expect(await store.list()).toEqual([]);
    // a removed record can be created again (a member that lost its lease re-joins)
    expect(await store.create(lease)).toBeTypeOf("number");
  });

  it("watches the records: each as it is, then each renewal and removal in order", async () => {
    const seen: LeaseChange[] = [];
    const lease = { memberId: "w", incarnation: "1", expiresAtMs: 1_000 };
    const first = (await store.create(lease)) ?? 0;
    const watch = await store.watch((change) => seen.push(change));
    const changesOfW = async (count: number): Promise<void> => {
      const deadline = Date.now() + 5_000;
      while (seen.filter((change) => change.memberId === "w").length < count && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
    };
    await changesOfW(1);
    const second = (await store.renew({ ...lease, expiresAtMs: 2_000 }, first)) ?? 0;
    expect(await store.remove("w", second)).toBe(true);
    await changesOfW(3);
    watch.stop();
    await watch.ended;
    expect(seen.filter((change) => change.memberId === "w")).toEqual([
      { memberId: "w", lease: { ...lease, revision: first } },
      { memberId: "w", lease: { ...lease, expiresAtMs: 2_000, revision: second } },
      { memberId: "w", lease: null },
    ]);
  });
});
