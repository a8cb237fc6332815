// The monitor runner: one poll stream per target, reconfiguration that restarts only changed targets, readiness, alerts.
import { offchainMonitors, runnerDeps } from "./helpers.js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { NO_PEERS } from "../../src/domain/cause-summary.js";
import type { JournaledEvent } from "../../src/domain/events.js";
import { createMonitorState } from "../../src/domain/monitor.js";
import { ScaledPrice } from "../../src/domain/price.js";
import type { PairPrice } from "../../src/domain/types.js";
import type { TargetHealth } from "../../src/domain/readiness.js";
import { PmError } from "../../src/domain/errors.js";
import { createEventHub } from "../../src/pipeline/event-hub.js";
import { createJournal } from "../../src/state/journal.js";
import { createMonitorRunner, type MonitorRunner } from "../../src/pipeline/monitor-runner.js";
import type { PairPriceQuery, PragmaClient } from "../../src/upstream/types.js";
import { rule } from "../domain/helpers.js";

const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);

/** A client whose pair-price calls are counted per pair and answered (or failed) on demand. */
function fakeClient(failing: Set<string>) {
  const calls = new Map<string, number>();
  /** Virtual times of the pair-price calls, per pair. */
  const callTimesByPair = new Map<string, number[]>();
  const notUsed = (): never => {
    throw new Error("not used in this test");
  };
  const client: PragmaClient = {
    getPairPrice: (query: PairPriceQuery) => {
      calls.set(query.pair, (calls.get(query.pair) ?? 0) + 1);
      const times = callTimesByPair.get(query.pair);
      if (times === undefined) callTimesByPair.set(query.pair, [Date.now()]);
      else times.push(Date.now());
      if (failing.has(query.pair)) {
        return Promise.reject(
          new PmError("PM_ERR_UPSTREAM_HTTP", "503", { retryable: true, details: { status: 503 } }),
        );
      }
      const price: PairPrice = {
        pairId: query.pair,
        price: new ScaledPrice(100n * 10n ** 18n, 18),
        numSources: 5,
        timestampMs: Date.now(),
        components: [],
      };
      return Promise.resolve(price);
    },
    getCandlesticks: notUsed,
    getFundingRates: notUsed,
    iterateFundingRates: notUsed,
    getOnchainEntry: notUsed,
    getOnchainPublishers: notUsed,
    getVault: notUsed,
  };
  return { client, calls, callTimesByPair };
}

/** Park–Miller minimal standard PRNG: uniform in [0, 1), deterministic per seed. */
function parkMiller(seed: number): () => number {
  let state = seed;
  return () => ((state = (state * 16_807) % 2_147_483_647) - 1) / 2_147_483_646;
}

/** Forty distinct pairs polled every second: enough targets to fill a period's coalescing slots. */
const fortyPairsAt1s = Array.from({ length: 40 }, (_, i) => ({ pair: `P${i}/USD`, periodMs: 1_000 }));

describe("createMonitorRunner", () => {
  let runner: MonitorRunner | undefined;
  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
  });
  afterEach(() => {
    runner?.stop();
    vi.useRealTimers();
  });

  const start = (failing = new Set<string>(), random = () => 0.5) => {
    const { client, calls, callTimesByPair } = fakeClient(failing);
    const hub = createEventHub({ journal: createJournal(100), nowMs: Date.now, version: "test" });
    const journaled: JournaledEvent[] = [];
    hub.events$.subscribe((e) => {
      if (e.type !== "price") journaled.push(e);
    });
    const prices: string[] = [];
    hub.wantPrices();
    hub.events$.subscribe((e) => {
      if (e.type === "price") prices.push(e.tick.pair);
    });
    runner = createMonitorRunner(runnerDeps(client, hub, random), createMonitorState());
    return { calls, callTimesByPair, hub, journaled, prices, runner };
  };

  it("polls each target on its own period and publishes price ticks", async () => {
    const { calls, prices, runner } = start();
    runner.update(
      offchainMonitors([
        { pair: "BTC/USD", periodMs: 1_000 },
        { pair: "ETH/USD", periodMs: 2_000 },
      ]),
      [],
    );
    await vi.advanceTimersByTimeAsync(4_500);
    expect(calls.get("BTC/USD")).toBe(5); // t = 0, 1, 2, 3, 4 s
    expect(calls.get("ETH/USD")).toBe(3); // t = 0, 2, 4 s
    expect(prices.filter((p) => p === "BTC/USD")).toHaveLength(5);
  });

  it("coalesces jittered polls onto the monitors.coalesceMs grid: fewer wake-ups, same poll rate", async () => {
    const { callTimesByPair, runner } = start(new Set(), parkMiller(7));
    runner.update({ ...offchainMonitors(fortyPairsAt1s), jitter: 0.1, coalesceMs: 100 }, []);
    await vi.advanceTimersByTimeAsync(10_000);
    const callTimes = [...callTimesByPair.values()].flat();
    const offsets = callTimes.map((t) => t - T0);
    expect(offsets.every((t) => t % 100 === 0)).toBe(true);
    expect(new Set(offsets).size).toBeLessThanOrEqual(101); // at most one wake-up per grid point
    // each target still polls about once a period: 10 s of 1 s periods (± jitter and rounding)
    expect(callTimes.length).toBeGreaterThanOrEqual(40 * 9);
    expect(callTimes.length).toBeLessThanOrEqual(40 * 11);
  });

  it("restarts the running polls under a reloaded coalesceMs, keeping each target's health", async () => {
    const { callTimesByPair, runner } = start(new Set(), parkMiller(5));
    const monitors = { ...offchainMonitors(fortyPairsAt1s), jitter: 0.1 };
    runner.update({ ...monitors, coalesceMs: 100 }, []);
    await vi.advanceTimersByTimeAsync(5_000);
    const offsetsSince = (fromMs: number): number[] =>
      [...callTimesByPair.values()]
        .flat()
        .filter((t) => t >= fromMs)
        .map((t) => t - T0);
    expect(offsetsSince(T0).every((t) => t % 100 === 0)).toBe(true);
    const reloadedAtMs = Date.now();
    runner.update({ ...monitors, coalesceMs: 0 }, []);
    // the same targets, not restarted: none waits for a first poll again
    expect(runner.targetHealth().every((t) => t.health.kind === "ok")).toBe(true);
    await vi.advanceTimersByTimeAsync(5_000);
    const after = offsetsSince(reloadedAtMs);
    // off the grid now (jittered starts are whole milliseconds anywhere), about one poll per (jittered) period each
    expect(after.filter((t) => t % 100 !== 0).length).toBeGreaterThan(after.length / 2);
    expect(after.length).toBeGreaterThanOrEqual(40 * 4);
    expect(after.length).toBeLessThanOrEqual(40 * 7);
  });

  it("keeps each target on its own phase (monitors.spreadMs): one poll per period, spread over the period", async () => {
    const { callTimesByPair, runner } = start(new Set(), parkMiller(11));
    runner.update({ ...offchainMonitors(fortyPairsAt1s), spreadMs: 10_000, coalesceMs: 100 }, []);
    await vi.advanceTimersByTimeAsync(10_000);
    const phases = new Set<number>();
    for (const { pair } of fortyPairsAt1s) {
      const times = (callTimesByPair.get(pair) ?? []).map((t) => t - T0);
      // the spread is capped at the period: the first poll within 1 s (rounded onto the 100 ms grid),
      // then exactly every period
      const first = times[0] ?? Number.NaN;
      expect(first).toBeLessThanOrEqual(1_000);
      expect(times).toEqual(Array.from({ length: times.length }, (_, k) => first + k * 1_000));
      expect(times.length).toBeGreaterThanOrEqual(10);
      phases.add(first % 1_000);
    }
    // 40 targets over the ten 100 ms slots of a period: none left empty, none holding most of them
    expect(phases.size).toBe(10);
  });

  it("polls targets taken over from another cluster member at once, their later polls spread over the period", async () => {
    const { callTimesByPair, runner } = start(new Set(), parkMiller(11));
    const firstHalf = new Set(fortyPairsAt1s.slice(0, 20).map(({ pair }) => pair));
    runner.restrict((spec) => "pair" in spec && firstHalf.has(spec.pair), true);
    runner.update({ ...offchainMonitors(fortyPairsAt1s), spreadMs: 10_000, coalesceMs: 100 }, []);
    await vi.advanceTimersByTimeAsync(5_000);
    // the first restriction of a member that runs nothing is its start: spread over the period
    const startFirsts = [...firstHalf].map((pair) => (callTimesByPair.get(pair)?.[0] ?? Number.NaN) - T0);
    expect(Math.max(...startFirsts)).toBeGreaterThan(250);
    const takenAtMs = Date.now();
    runner.restrict(() => true, true);
    await vi.advanceTimersByTimeAsync(5_000);
    const secondPhases = new Set<number>();
    for (const { pair } of fortyPairsAt1s.slice(20)) {
      const [first, second, third] = (callTimesByPair.get(pair) ?? []).map((t) => t - takenAtMs);
      // not at its phase, not on the 100 ms grid: the lease already ran out a period after the last poll
      expect(first).toBe(0);
      // the next within a period (its phase rounded onto the grid), then exactly every period at that phase
      expect(second).toBeGreaterThanOrEqual(0);
      expect(second).toBeLessThanOrEqual(1_050);
      expect((third ?? Number.NaN) - (second ?? Number.NaN)).toBe(1_000);
      secondPhases.add((second ?? Number.NaN) % 1_000);
    }
    // 20 targets taken over at one instant still spread over the period: not one burst every second
    expect(secondPhases.size).toBeGreaterThanOrEqual(6);
  });

  it("runs the cause rules only while restricted with runsCauses (the cluster's cause key) and its peers are ready, the others always", async () => {
    const failing = new Set(["BTC/USD", "ETH/USD", "SOL/USD"]);
    const { journaled, runner } = start(failing);
    const rules = [
      rule("upstream_error", {}, { threshold: 2 }),
      rule("upstream_down", { minFraction: 0, windowMs: 10_000 }, { threshold: 3 }),
    ];
    const firingRules = (): string[] =>
      journaled.flatMap((e) => (e.type === "alert" && e.alert.status === "firing" ? [e.alert.rule] : []));
    runner.restrict(() => true, false);
    runner.update(offchainMonitors([...failing].map((pair) => ({ pair, periodMs: 1_000 }))), rules);
    await vi.advanceTimersByTimeAsync(3_500);
    expect(new Set(firingRules())).toEqual(new Set(["upstream_error"]));
    runner.restrict(() => true, true);
    await vi.advanceTimersByTimeAsync(1_500);
    // the peers' summaries are not in yet: no cause alert transition, neither fire nor resolve
    expect(firingRules().filter((kind) => kind === "upstream_down")).toHaveLength(0);
    runner.clusterCauses(NO_PEERS, new Set(), true);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(firingRules().filter((kind) => kind === "upstream_down")).toHaveLength(1);
  });

  it("reports each target as waiting until its first poll, then the latest outcome with its error code", async () => {
    const failing = new Set(["ETH/USD"]);
    const { runner } = start(failing);
    runner.update(
      offchainMonitors([
        { pair: "BTC/USD", periodMs: 1_000 },
        { pair: "ETH/USD", periodMs: 1_000 },
      ]),
      [],
    );
    const health = (): Record<string, TargetHealth> =>
      Object.fromEntries(runner.targetHealth().map((t) => [t.id.split(":")[1] ?? t.id, t.health]));
    expect(health()).toEqual({ "BTC/USD": { kind: "waiting" }, "ETH/USD": { kind: "waiting" } });
    await vi.advanceTimersByTimeAsync(1);
    expect(health()).toEqual({
      "BTC/USD": { kind: "ok" },
      "ETH/USD": {
        kind: "failing",
        code: "PM_ERR_UPSTREAM_HTTP",
        consecutiveFailures: 1,
        everSucceeded: false,
      },
    });
    failing.delete("ETH/USD");
    await vi.advanceTimersByTimeAsync(2_000);
    expect(health()["ETH/USD"]).toEqual({ kind: "ok" });
    failing.add("ETH/USD");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(health()["ETH/USD"]).toMatchObject({ kind: "failing", everSucceeded: true });
  });

  it("reports each target's latest poll, next poll and data for the API, with history from the rule's ring", async () => {
    const failing = new Set(["ETH/USD"]);
    const { runner } = start(failing);
    runner.update(
      offchainMonitors([
        { pair: "BTC/USD", periodMs: 1_000 },
        { pair: "ETH/USD", periodMs: 1_000 },
      ]),
      [rule("price_change", { market: "offchain", windowMs: 60_000 }, { threshold: 0.5 })],
    );
    expect(runner.targetReports(10).map((r) => [r.spec.id.split(":")[1], r.lastPoll, r.data])).toEqual([
      ["BTC/USD", null, null],
      ["ETH/USD", null, null],
    ]);
    await vi.advanceTimersByTimeAsync(3_500);
    const [btc, eth] = runner.targetReports(2);
    expect(btc?.lastPoll).toEqual({
      endedAtMs: T0 + 3_000,
      durationMs: 0,
      ok: true,
      consecutiveFailures: 0,
      error: null,
    });
    expect(btc?.nextPollAtMs).toBe(T0 + 4_000);
    expect(btc?.ageMs).toBe(500);
    expect(btc?.data?.latest).toEqual({
      kind: "price",
      price: "100",
      comparable: true,
      atMs: T0 + 3_000,
      numSources: 5,
    });
    expect(btc?.data?.history).toEqual([
      { atMs: T0, value: 100 },
      { atMs: T0 + 3_000, value: 100 },
    ]);
    expect(eth?.lastPoll).toMatchObject({ ok: false, error: { code: "PM_ERR_UPSTREAM_HTTP" } });
    expect(eth?.lastPoll?.consecutiveFailures).toBeGreaterThan(0);
    expect(eth?.nextPollAtMs).toBeNull();
    expect(eth?.data?.latest ?? null).toBeNull();
  });

  it("restarts only the targets whose config changed on update", async () => {
    const { calls, runner } = start();
    runner.update(
      offchainMonitors([
        { pair: "BTC/USD", periodMs: 1_000 },
        { pair: "ETH/USD", periodMs: 1_000 },
      ]),
      [],
    );
    await vi.advanceTimersByTimeAsync(1_500); // polls at 0 and 1 s
    expect([calls.get("BTC/USD"), calls.get("ETH/USD")]).toEqual([2, 2]);
    // ETH/USD changes period (restarts: polls at once), BTC/USD is untouched (next poll still at 2 s), SOL/USD is new
    runner.update(
      offchainMonitors([
        { pair: "BTC/USD", periodMs: 1_000 },
        { pair: "ETH/USD", periodMs: 3_000 },
        { pair: "SOL/USD", periodMs: 1_000 },
      ]),
      [],
    );
    await vi.advanceTimersByTimeAsync(1);
    expect([calls.get("BTC/USD"), calls.get("ETH/USD"), calls.get("SOL/USD")]).toEqual([2, 3, 1]);
    await vi.advanceTimersByTimeAsync(600); // t = 2.1 s
    expect(calls.get("BTC/USD")).toBe(3);
    runner.update(offchainMonitors([{ pair: "BTC/USD", periodMs: 1_000 }]), []);
    const before = { eth: calls.get("ETH/USD"), sol: calls.get("SOL/USD") };
    await vi.advanceTimersByTimeAsync(5_000);
    expect({ eth: calls.get("ETH/USD"), sol: calls.get("SOL/USD") }).toEqual(before);
    expect(runner.targetIds()).toEqual(["offchain:BTC/USD:spot:median:1s"]);
  });

  it("raises upstream_error after consecutive failures and resolves it on recovery", async () => {
    const failing = new Set(["BTC/USD"]);
    const { journaled, runner } = start(failing);
    const rules = [rule("upstream_error", {}, { threshold: 3 })];
    runner.update(offchainMonitors([{ pair: "BTC/USD", periodMs: 1_000 }]), rules);
    await vi.advanceTimersByTimeAsync(10_000); // failures at 0, 1, 3 s (backoff) ...
    const firing = journaled.filter((e) => e.type === "alert" && e.alert.status === "firing");
    expect(firing).toHaveLength(1);
    failing.clear();
    await vi.advanceTimersByTimeAsync(10_000);
    const statuses = journaled.flatMap((e) =>
      e.type === "alert" ? [`${e.alert.rule}:${e.alert.status}`] : [],
    );
    expect(statuses).toEqual(["upstream_error:firing", "upstream_error:resolved"]);
    expect(journaled.map((e) => e.seq)).toEqual([1, 2]);
  });

  it("shows a held alert's current value to snapshots without journaling or announcing it", async () => {
    const failing = new Set(["BTC/USD"]);
    const { hub, journaled, runner } = start(failing);
    const rules = [
      rule("upstream_error", {}, { threshold: 1, flapMaxTransitions: 3, flapWindowMs: 600_000 }),
    ];
    runner.update(offchainMonitors([{ pair: "BTC/USD", periodMs: 1_000 }]), rules);
    for (const fail of [false, true, false]) {
      await vi.advanceTimersByTimeAsync(5_000);
      if (fail) failing.add("BTC/USD");
      else failing.clear();
    }
    await vi.advanceTimersByTimeAsync(5_000); // recovered: the fourth flip, held by flap damping
    const statuses = journaled.flatMap((e) => (e.type === "alert" ? [e.alert.status] : []));
    expect(statuses).toEqual(["firing", "resolved", "firing"]);
    const shown = hub.activeAlerts();
    expect(shown).toHaveLength(1);
    expect(shown[0]?.summary).toMatch(/polls succeed again; flapping: held firing until /);
    expect(shown[0]).toMatchObject({ value: 0, reason: "first", context: { flapping: true } });
  });

  it("stops polling on stop()", async () => {
    const { calls, runner } = start();
    runner.update(offchainMonitors([{ pair: "BTC/USD", periodMs: 1_000 }]), []);
    await vi.advanceTimersByTimeAsync(1_500);
    runner.stop();
    const count = calls.get("BTC/USD");
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls.get("BTC/USD")).toBe(count);
  });
});
