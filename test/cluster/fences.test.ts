// The fences: without a valid lease no upstream request leaves and no alert is published; with one, both pass through.
import { describe, expect, it } from "vitest";
import { fencedClient, fencedHub } from "../../src/cluster/fences.js";
import type { AlertPayload } from "../../src/domain/events.js";
import { createEventHub } from "../../src/pipeline/event-hub.js";
import { createJournal } from "../../src/state/journal.js";
import type { PragmaClient } from "../../src/upstream/types.js";

const ALERT: AlertPayload = {
  fingerprint: "fp-btc",
  status: "firing",
  rule: "price_change",
  severity: "warning",
  labels: { pair: "BTC/USD", market: "offchain", entry_type: "spot", window: "10s" },
  summary: "BTC/USD moved +6.00% in 10s (threshold 2%)",
  value: 0.06,
  threshold: 0.02,
  startsAt: "2026-11-22T10:00:00.000Z",
  endsAt: null,
  reason: "first",
  context: {},
};

/** A client that counts the calls that reached it. */
function countingClient(): { readonly client: PragmaClient; readonly calls: string[] } {
  const calls: string[] = [];
  const answer = (name: string) => () => {
    calls.push(name);
    return Promise.resolve({} as never);
  };
  const client: PragmaClient = {
    getPairPrice: answer("getPairPrice"),
    getCandlesticks: answer("getCandlesticks"),
    getFundingRates: answer("getFundingRates"),
    async *iterateFundingRates() {
      calls.push("iterateFundingRates");
      yield* await Promise.resolve([]);
    },
    getOnchainEntry: answer("getOnchainEntry"),
    getOnchainPublishers: answer("getOnchainPublishers"),
    getVault: answer("getVault"),
  };
  return { client, calls };
}

describe("fencedClient", () => {
  it("refuses every call with PM_ERR_CLUSTER_FENCED while the fence is shut, and passes them when open", async () => {
    let open = false;
    const { client, calls } = countingClient();
    const fenced = fencedClient(client, () => open);
    const query = { base: "BTC", quote: "USD" } as never;
    await expect(fenced.getPairPrice(query)).rejects.toMatchObject({ code: "PM_ERR_CLUSTER_FENCED" });
    await expect(fenced.getVault("v")).rejects.toMatchObject({ code: "PM_ERR_CLUSTER_FENCED" });
    await expect(fenced.iterateFundingRates(query)[Symbol.asyncIterator]().next()).rejects.toMatchObject({
      code: "PM_ERR_CLUSTER_FENCED",
    });
    expect(calls).toEqual([]);
    open = true;
    await fenced.getPairPrice(query);
    await fenced.getOnchainEntry(query);
    for await (const rate of fenced.iterateFundingRates(query)) expect(rate).toBeUndefined();
    expect(calls).toEqual(["getPairPrice", "getOnchainEntry", "iterateFundingRates"]);
  });
});

describe("fencedHub", () => {
  it("drops alerts while the fence is shut (nothing journaled), publishes them when open, and delegates the rest", () => {
    let open = false;
    const hub = createEventHub({ journal: createJournal(100), nowMs: () => 0, version: "test" });
    const fenced = fencedHub(hub, () => open);
    fenced.publishAlert(ALERT);
    expect(hub.lastSeq()).toBe(0);
    expect(hub.activeAlerts()).toEqual([]);
    open = true;
    fenced.publishAlert(ALERT);
    expect(hub.lastSeq()).toBe(1);
    expect(fenced.activeAlerts().map((alert) => alert.fingerprint)).toEqual(["fp-btc"]);
    expect(fenced.events$).toBe(hub.events$);
  });

  it("tells after each alert it let through, never after one it dropped", () => {
    let open = false;
    let published = 0;
    const hub = createEventHub({ journal: createJournal(100), nowMs: () => 0, version: "test" });
    const fenced = fencedHub(
      hub,
      () => open,
      () => (published += 1),
    );
    fenced.publishAlert(ALERT);
    expect(published).toBe(0);
    open = true;
    fenced.publishAlert(ALERT);
    expect(published).toBe(1);
  });
});
