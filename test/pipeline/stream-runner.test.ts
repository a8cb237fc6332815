// Streamed targets in the runner: a fake stream under fake timers (fallback, recovery, one observation per
// timestamp), then the real simulator over sockets (an alert from a streamed step, a stall, a disconnect).
import { pino } from "pino";
import { Registry } from "prom-client";
import { Subject } from "rxjs";
import { Agent } from "undici";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AlertEvent } from "../../src/domain/events.js";
import { createMonitorState } from "../../src/domain/monitor.js";
import { ScaledPrice } from "../../src/domain/price.js";
import type { PairPrice } from "../../src/domain/types.js";
import { PmError } from "../../src/domain/errors.js";
import { createMetrics, type Metrics } from "../../src/metrics.js";
import { createEventHub } from "../../src/pipeline/event-hub.js";
import {
  createMonitorRunner,
  type MonitorRunner,
  type MonitorRunnerDeps,
} from "../../src/pipeline/monitor-runner.js";
import { createSystemClock } from "../../src/simulator/clock.js";
import { startSimulator, type RunningSimulator } from "../../src/simulator/server.js";
import { createJournal } from "../../src/state/journal.js";
import { createPragmaClient } from "../../src/upstream/client.js";
import {
  multiStream$,
  streamReconnectBackoff,
  type StreamSignal,
} from "../../src/upstream/multi-stream-client.js";
import type { PragmaClient } from "../../src/upstream/types.js";
import { rule } from "../domain/helpers.js";
import { offchainMonitors, streamOn } from "./helpers.js";

const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);

const pairPrice = (timestampMs: number, units = 100n): PairPrice => ({
  pairId: "BTC/USD",
  price: new ScaledPrice(units * 10n ** 18n, 18),
  numSources: 5,
  timestampMs,
  components: [],
});

const streamedBtc = (interval: "100ms" | "1s" = "1s") => {
  const monitors = offchainMonitors([{ pair: "BTC/USD", periodMs: 500 }]);
  return {
    ...monitors,
    offchain: monitors.offchain.map((m) => ({ ...m, interval, transport: "stream" as const })),
  };
};

/** A runner with streamed targets on `stream`; its random draws and poll timeout are the test's to set. */
function startRunner(
  client: PragmaClient,
  stream: NonNullable<MonitorRunnerDeps["stream"]>,
  options: { readonly random?: () => number; readonly pollTimeoutMs?: number } = {},
) {
  const nowMs = Date.now;
  const hub = createEventHub({ journal: createJournal(1_000), nowMs, version: "test" });
  const ticks: { timestamp: string; observedAt: string }[] = [];
  const alerts: AlertEvent[] = [];
  hub.wantPrices();
  hub.events$.subscribe((e) => {
    if (e.type === "price") ticks.push({ timestamp: e.tick.timestamp, observedAt: e.tick.observedAt });
    if (e.type === "alert") alerts.push(e);
  });
  const metrics = createMetrics(new Registry(), { collectProcess: false });
  const runner = createMonitorRunner(
    {
      client,
      hub,
      metrics,
      logger: pino({ level: "silent" }),
      nowMs,
      random: options.random ?? (() => 0.5),
      pollTimeoutMs: options.pollTimeoutMs ?? 1_000,
      stream,
    },
    createMonitorState(),
  );
  return { runner, ticks, alerts, metrics };
}

const gauge = async (
  metrics: Metrics,
  name: keyof Metrics,
  labels: Record<string, string>,
): Promise<number> => {
  const metric = metrics[name] as { get(): Promise<{ values: { labels: object; value: number }[] }> };
  const { values } = await metric.get();
  const found = values.find((v) =>
    Object.entries(labels).every(([k, x]) => (v.labels as Record<string, string>)[k] === x),
  );
  return found?.value ?? 0;
};

describe("a streamed target with a fake stream (fake timers)", () => {
  let runner: MonitorRunner | undefined;
  afterEach(() => {
    runner?.stop();
    vi.useRealTimers();
  });

  it("takes prices from the stream without polling, falls back when it goes down, and never feeds a timestamp twice", async () => {
    vi.useFakeTimers({ now: T0 });
    const signals = new Subject<StreamSignal>();
    let polled = 0;
    const client = {
      getPairPrice: () => {
        polled++;
        return Promise.resolve(pairPrice(T0 + 1_000)); // the same price the stream sent
      },
    } as unknown as PragmaClient;
    const started = startRunner(client, streamOn(signals, "poll"));
    runner = started.runner;
    runner.update(streamedBtc(), []);
    const prices = (p: PairPrice): StreamSignal => ({
      kind: "event",
      event: { kind: "prices", prices: [p] },
    });
    signals.next({ kind: "connected" });
    await vi.advanceTimersByTimeAsync(1_000);
    signals.next(prices(pairPrice(T0 + 1_000)));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(polled).toBe(0);
    expect(started.ticks.map((t) => Date.parse(t.timestamp) - T0)).toEqual([1_000]);
    // the API: the streamed price is the latest "poll", and no poll is due while the stream delivers
    const streaming = runner.targetReports(0)[0];
    expect(streaming?.lastPoll).toEqual({
      endedAtMs: T0 + 1_000,
      durationMs: 0,
      ok: true,
      consecutiveFailures: 0,
      error: null,
    });
    expect(streaming?.nextPollAtMs).toBeNull();
    expect(streaming?.data?.latest).toMatchObject({ kind: "price", atMs: T0 + 1_000 });

    const down = new PmError("PM_ERR_UPSTREAM_STREAM", "closed", { retryable: true });
    signals.next({ kind: "down", error: down, reconnectInMs: 60_000 });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(polled).toBeGreaterThanOrEqual(3); // the fallback polls at the target's 500 ms period
    expect(await gauge(started.metrics, "streamFallbacks", { interval: "1s" })).toBe(1);
    expect(await gauge(started.metrics, "streamTargets", { mode: "poll" })).toBe(1);
    // every poll answered the timestamp the stream already delivered: still one observation of it
    expect(started.ticks.map((t) => Date.parse(t.timestamp) - T0)).toEqual([1_000]);
    // fallen back: the API shows the fallback polls and when the next one is due
    const polling = runner.targetReports(0)[0];
    expect(polling?.lastPoll).toMatchObject({ ok: true, consecutiveFailures: 0 });
    expect(polling?.lastPoll?.endedAtMs).toBeGreaterThan(T0 + 2_000);
    expect(polling?.nextPollAtMs).toBeGreaterThan(Date.now() - 1);

    signals.next({ kind: "connected" });
    signals.next(prices(pairPrice(T0 + 4_000)));
    await vi.advanceTimersByTimeAsync(500);
    signals.next(prices(pairPrice(T0 + 4_500)));
    await vi.advanceTimersByTimeAsync(100);
    const pollsWhenBack = polled;
    await vi.advanceTimersByTimeAsync(3_000);
    expect(await gauge(started.metrics, "streamTargets", { mode: "stream" })).toBe(1);
    expect(polled).toBe(pollsWhenBack); // back on the stream: the polls stopped
    expect(started.ticks.map((t) => Date.parse(t.timestamp) - T0)).toEqual([1_000, 4_000, 4_500]);
  });

  it("a slow connect and a first event arriving in slow chunks keep the target on the stream (no fallback poll)", async () => {
    vi.useFakeTimers({ now: T0 });
    const signals = new Subject<StreamSignal>();
    let polled = 0;
    const client = {
      getPairPrice: () => {
        polled++;
        return new Promise(() => {});
      },
    } as unknown as PragmaClient;
    const started = startRunner(client, streamOn(signals));
    runner = started.runner;
    runner.update(streamedBtc(), []);
    await vi.advanceTimersByTimeAsync(2_500); // connecting takes 2.5 s
    signals.next({ kind: "connected" });
    for (let i = 0; i < 4; i++) {
      await vi.advanceTimersByTimeAsync(2_500); // the historical event's bytes trickle in for 10 s
      signals.next({ kind: "progress" });
    }
    await vi.advanceTimersByTimeAsync(2_500);
    const history = [pairPrice(T0 - 1_000)];
    signals.next({ kind: "event", event: { kind: "historical", prices: history } });
    await vi.advanceTimersByTimeAsync(2_500);
    signals.next({ kind: "event", event: { kind: "prices", prices: [pairPrice(T0 + 17_500)] } });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await gauge(started.metrics, "streamFallbacks", { interval: "1s" })).toBe(0);
    expect(polled).toBe(0);
    // a connection that then goes silent past the window still falls back
    await vi.advanceTimersByTimeAsync(3_500);
    expect(await gauge(started.metrics, "streamFallbacks", { interval: "1s" })).toBe(1);
  });

  it("a stream that stays silent counts one stale failure, and failing polls then raise upstream_error", async () => {
    vi.useFakeTimers({ now: T0 });
    const client = {
      getPairPrice: () => Promise.reject(new PmError("PM_ERR_UPSTREAM_HTTP", "503", { retryable: true })),
    } as unknown as PragmaClient;
    const started = startRunner(client, streamOn(new Subject<StreamSignal>()));
    runner = started.runner;
    const monitors = streamedBtc();
    runner.update({ ...monitors, offchain: monitors.offchain.map((m) => ({ ...m, transport: null })) }, [
      rule("upstream_error", {}, { threshold: 3 }),
    ]);
    await vi.advanceTimersByTimeAsync(3_500);
    expect(started.alerts).toEqual([]); // stale at 3 s: one failure, the first poll fails: two
    await vi.advanceTimersByTimeAsync(2_000);
    const fired = started.alerts.map((a) => [a.alert.rule, a.alert.status, a.alert.context["lastErrorCode"]]);
    expect(fired).toEqual([["upstream_error", "firing", "PM_ERR_UPSTREAM_HTTP"]]);
  });
});

describe("the component polls of streamed targets", () => {
  let runner: MonitorRunner | undefined;
  afterEach(() => {
    runner?.stop();
    vi.useRealTimers();
  });

  /** A runner streaming `monitors` (one connection, components every 60 s for a component_deviation rule), connected. */
  function startComponents(
    client: PragmaClient,
    monitors: Parameters<MonitorRunner["update"]>[0],
    options: Parameters<typeof startRunner>[2],
  ): { readonly started: ReturnType<typeof startRunner>; readonly signals: Subject<StreamSignal> } {
    const signals = new Subject<StreamSignal>();
    const started = startRunner(client, streamOn(signals), options);
    runner = started.runner;
    runner.update(monitors, [rule("component_deviation", { market: "offchain" }, { threshold: 0.01 })]);
    signals.next({ kind: "connected" });
    return { started, signals };
  }

  /** `seconds` stream intervals of virtual time, each ending with one prices event of `pairs`. */
  async function streamFor(
    signals: Subject<StreamSignal>,
    seconds: number,
    pairs: readonly string[],
  ): Promise<void> {
    for (let s = 1; s <= seconds; s++) {
      await vi.advanceTimersByTimeAsync(1_000);
      const prices = pairs.map((pair) => ({ ...pairPrice(Date.now()), pairId: pair }));
      signals.next({ kind: "event", event: { kind: "prices", prices } });
    }
  }

  it("share whole-second wake-ups (coalescing on), each target once per componentsPeriodMs", async () => {
    vi.useFakeTimers({ now: T0 });
    const callTimes = new Map<string, number[]>();
    const client = {
      getPairPrice: (pair: string) => {
        callTimes.set(pair, [...(callTimes.get(pair) ?? []), Date.now() - T0]);
        return Promise.resolve({ ...pairPrice(Date.now()), pairId: pair });
      },
    } as unknown as PragmaClient;
    let seed = 7;
    const random = (): number => (seed = (seed * 16_807) % 2_147_483_647) / 2_147_483_647;
    const pairs = Array.from({ length: 40 }, (_, i) => ({ pair: `P${i}/USD`, periodMs: 1_000 }));
    const monitors = { ...offchainMonitors(pairs), spreadMs: 10_000, coalesceMs: 100 };
    const { signals } = startComponents(client, monitors, { random, pollTimeoutMs: 15_000 });
    await streamFor(
      signals,
      130,
      pairs.map(({ pair }) => pair),
    );
    const offsets = [...callTimes.values()].flat();
    // 40 polls spread over 10 s, on the whole seconds only (100 ms slots would give most of them their own)
    expect(offsets.every((t) => t % 1_000 === 0)).toBe(true);
    expect(new Set(offsets.map((t) => t % 60_000)).size).toBeLessThanOrEqual(11);
    for (const times of callTimes.values()) {
      expect(times).toHaveLength(3); // within 130 s: its phase, then every 60 s
      expect((times[2] ?? 0) - (times[1] ?? 0)).toBe(60_000);
    }
    expect(callTimes.size).toBe(40);
  });
  it("restart under a reloaded coalesceMs: off the whole seconds once coalescing is turned off", async () => {
    vi.useFakeTimers({ now: T0 });
    const callTimes: number[] = [];
    const client = {
      getPairPrice: (pair: string) => {
        callTimes.push(Date.now() - T0);
        return Promise.resolve({ ...pairPrice(Date.now()), pairId: pair });
      },
    } as unknown as PragmaClient;
    let seed = 3;
    const random = (): number => (seed = (seed * 16_807) % 2_147_483_647) / 2_147_483_647;
    const pairs = Array.from({ length: 20 }, (_, i) => ({ pair: `P${i}/USD`, periodMs: 1_000 }));
    const monitors = { ...offchainMonitors(pairs), spreadMs: 10_000, coalesceMs: 100 };
    const { signals } = startComponents(client, monitors, { random, pollTimeoutMs: 15_000 });
    const ids = pairs.map(({ pair }) => pair);
    await streamFor(signals, 20, ids);
    expect(callTimes.length).toBe(20);
    expect(callTimes.every((t) => t % 1_000 === 0)).toBe(true);
    runner?.update({ ...monitors, coalesceMs: 0 }, [
      rule("component_deviation", { market: "offchain" }, { threshold: 0.01 }),
    ]);
    await streamFor(signals, 70, ids);
    const after = callTimes.slice(20);
    // each restarted within its spread (10 s), then a minute later; at their own milliseconds now
    expect(after.length).toBe(40);
    expect(after.filter((t) => t % 1_000 !== 0).length).toBeGreaterThan(30);
  });

  it("keep slots of a fifth of a short poll timeout: a 400 ms timeout is not rounded away", async () => {
    vi.useFakeTimers({ now: T0 });
    let answered = 0;
    const client = {
      getPairPrice: async (pair: string) => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        answered++;
        return { ...pairPrice(Date.now()), pairId: pair };
      },
    } as unknown as PragmaClient;
    const monitors = { ...streamedBtc(), spreadMs: 10_000, coalesceMs: 100 };
    const { started, signals } = startComponents(client, monitors, { pollTimeoutMs: 400 });
    await streamFor(signals, 70, ["BTC/USD"]);
    // on one-second slots the timeout (due 400 ms after a whole second) rounded back to the start: every poll failed
    expect(answered).toBe(2);
    expect(await gauge(started.metrics, "polls", { outcome: "ok" })).toBe(2);
    expect(await gauge(started.metrics, "polls", { outcome: "error" })).toBe(0);
  });
});

describe("the stream's historical event", () => {
  let runner: MonitorRunner | undefined;
  afterEach(() => {
    runner?.stop();
    vi.useRealTimers();
  });

  // price_change over 10 s: right after connect, only the historical prices give it a reference
  it.each([
    ["fills price history, so a window rule judges the first streamed price", true, ["price_change firing"]],
    ["(without it, the same first price has no reference: no verdict)", false, []],
  ])("%s", async (_name, withHistory, expected) => {
    vi.useFakeTimers({ now: T0 });
    const signals = new Subject<StreamSignal>();
    const client = { getPairPrice: () => new Promise(() => {}) } as unknown as PragmaClient;
    const started = startRunner(client, streamOn(signals));
    runner = started.runner;
    const rules = [rule("price_change", { market: "offchain", windowMs: 10_000 }, { threshold: 0.05 })];
    runner.update(streamedBtc(), rules);
    signals.next({ kind: "connected" });
    const history = Array.from({ length: 12 }, (_, i) => pairPrice(T0 - 12_000 + i * 1_000, 100n));
    if (withHistory) signals.next({ kind: "event", event: { kind: "historical", prices: history } });
    await vi.advanceTimersByTimeAsync(500);
    signals.next({ kind: "event", event: { kind: "prices", prices: [pairPrice(T0 + 500, 110n)] } });
    await vi.advanceTimersByTimeAsync(100);
    expect(started.alerts.map((a) => `${a.alert.rule} ${a.alert.status}`)).toEqual(expected);
    // what the API's sparkline shows: the historical points (those within the rule's window) and the new price
    const points = runner.targetReports(120)[0]?.data?.history.length ?? 0;
    expect(points > 1).toBe(withHistory);
  });
});

describe("streamed targets against the simulator (real sockets)", () => {
  let sim: RunningSimulator | undefined;
  let runner: MonitorRunner | undefined;
  const agent = new Agent({ keepAliveTimeout: 500, keepAliveMaxTimeout: 500 });
  afterEach(async () => {
    runner?.stop();
    await sim?.close();
  });

  const start = async () => {
    sim = await startSimulator({ seed: 7, clock: createSystemClock(1) });
    const base = sim.url;
    let polled = 0;
    const real = createPragmaClient({
      baseUrl: base,
      vaultBaseUrl: sim.vaultUrl,
      dispatcher: agent,
      timeoutMs: 1_000,
      retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0, maxElapsedMs: 0 },
    });
    const client: PragmaClient = {
      ...real,
      getPairPrice: (query, call) => {
        polled++;
        return real.getPairPrice(query, call);
      },
    };
    const started = startRunner(client, {
      open: (pairs, interval, silenceMs) =>
        multiStream$({
          baseUrl: base,
          dispatcher: agent,
          pairs,
          interval,
          historicalPrices: 5,
          connectTimeoutMs: 1_000,
          silenceMs,
          reconnect: { ...streamReconnectBackoff(500), baseDelayMs: 100 },
          random: () => 0.5,
        }),
      staleIntervals: 3,
      recoverEvents: 3,
      maxPairsPerConnection: 500,
      componentsPeriodMs: 60_000,
      defaultTransport: "stream",
    });
    runner = started.runner;
    return { ...started, sim, polls: () => polled };
  };

  const waitFor = async (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 8_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it("fires an alert from a streamed step, with no poll at all", async () => {
    const t = await start();
    const rules = [rule("price_level", { market: "offchain", direction: "above" }, { threshold: 1_000_000 })];
    t.runner.update(streamedBtc("100ms"), rules);
    await waitFor("streamed prices", () => t.ticks.length >= 3);
    t.sim.control.inject({ kind: "spike", pair: "BTC/USD", factor: 100 });
    await waitFor("the alert", () => t.alerts.some((a) => a.alert.rule === "price_level"));
    expect(t.polls()).toBe(0);
    expect(await gauge(t.metrics, "streamConnections", { interval: "100ms" })).toBe(1);
  });

  it("a stall hands the target to polls, and the stream takes it back once it flows again", async () => {
    const t = await start();
    t.runner.update(streamedBtc("100ms"), []);
    await waitFor("streamed prices", () => t.ticks.length >= 3);
    expect(t.polls()).toBe(0);
    const stall = t.sim.control.inject({ kind: "streamStall" });
    await waitFor(
      "the fallback",
      async () => (await gauge(t.metrics, "streamFallbacks", { interval: "100ms" })) === 1,
    );
    await waitFor("fallback polls", () => t.polls() >= 2);
    t.sim.control.remove(stall);
    await waitFor(
      "the stream back",
      async () => (await gauge(t.metrics, "streamTargets", { mode: "stream" })) === 1,
    );
    const polls = t.polls();
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(t.polls()).toBeLessThanOrEqual(polls + 1); // at most a poll in flight when it switched
    // one observation per price timestamp, whichever path delivered it
    const stamps = t.ticks.map((tick) => tick.timestamp);
    expect(new Set(stamps).size).toBe(stamps.length);
  }, 20_000);

  it("reconnects after a disconnect", async () => {
    const t = await start();
    t.runner.update(streamedBtc("100ms"), []);
    await waitFor("streamed prices", () => t.ticks.length >= 2);
    t.sim.control.inject({ kind: "streamDisconnect" }, { durationMs: 300 });
    await waitFor(
      "a reconnect",
      async () => (await gauge(t.metrics, "streamReconnects", { interval: "100ms" })) >= 1,
    );
    const before = t.ticks.length;
    await waitFor("prices again", () => t.ticks.length > before + 2);
    expect(await gauge(t.metrics, "streamConnections", { interval: "100ms" })).toBe(1);
  }, 20_000);
});
