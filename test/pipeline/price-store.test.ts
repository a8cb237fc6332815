// A polled target's price is one store rewritten by each poll: nothing the daemon hands out may change with it.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { JournaledEvent, PriceTick } from "../../src/domain/events.js";
import { createMonitorState } from "../../src/domain/monitor.js";
import { ScaledPrice } from "../../src/domain/price.js";
import type { PairPrice } from "../../src/domain/types.js";
import { createEventHub } from "../../src/pipeline/event-hub.js";
import { createMonitorRunner, type MonitorRunner } from "../../src/pipeline/monitor-runner.js";
import { createJournal } from "../../src/state/journal.js";
import type { PragmaClient } from "../../src/upstream/types.js";
import { rule } from "../domain/helpers.js";
import { offchainMonitors, pairPriceClient, runnerDeps } from "./helpers.js";

const T0 = Date.UTC(2026, 10, 27, 4, 0, 0);

/** A freshly decoded body at `nowMs`: the aggregate and two sources, the second `offPercent` % off it. */
function body(nowMs: number, aggregate: bigint, offPercent: bigint): PairPrice {
  const price = (raw: bigint): ScaledPrice => ScaledPrice.fromHex(`0x${raw.toString(16)}`, 8)!;
  return {
    pairId: "BTC/USD",
    price: price(aggregate),
    numSources: 2,
    timestampMs: nowMs,
    components: [
      { source: "A", price: price(aggregate), timestampMs: nowMs },
      { source: "B", price: price((aggregate * (100n + offPercent)) / 100n), timestampMs: nowMs - 500 },
    ],
  };
}

/** Each poll answers the next body of `script` (the last one repeats), decoded afresh. */
function scriptedClient(
  script: ReadonlyArray<readonly [aggregate: bigint, offPercent: bigint]>,
): PragmaClient {
  let polls = 0;
  return pairPriceClient(() => {
    const [aggregate, offPercent] = script[Math.min(polls++, script.length - 1)]!;
    return Promise.resolve(body(Date.now(), aggregate, offPercent));
  });
}

/** A deep copy to compare with later: what the value showed when it was handed out. */
const frozenCopy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe("a polled target's stored price", () => {
  let runner: MonitorRunner | undefined;
  afterEach(() => {
    runner?.stop();
    vi.useRealTimers();
  });

  it("leaves every alert, price tick and report handed out before the next poll as it was", async () => {
    vi.useFakeTimers({ now: T0 });
    const hub = createEventHub({ journal: createJournal(100), nowMs: Date.now, version: "test" });
    const alerts: JournaledEvent[] = [];
    const ticks: PriceTick[] = [];
    hub.events$.subscribe((event) => {
      if (event.type === "alert") alerts.push(event);
    });
    const release = hub.wantPrices();
    hub.events$.subscribe((event) => {
      if (event.type === "price") ticks.push(event.tick);
    });
    // B is 5 % off for three polls (firing after forMs: its payload is described then, from the stored price),
    // then moves to 7 % and back to 0 (resolved): every poll rewrites the same stored components
    const script = [
      [1_000_000n, 5n],
      [1_100_000n, 5n],
      [1_200_000n, 5n],
      [1_300_000n, 7n],
      [1_400_000n, 0n],
    ] as const;
    runner = createMonitorRunner(runnerDeps(scriptedClient(script), hub), createMonitorState());
    runner.update(offchainMonitors([{ pair: "BTC/USD", periodMs: 1_000 }]), [
      rule("component_deviation", { market: "offchain" }, { threshold: 0.01, forMs: 1_500 }),
    ]);

    const handedOut: { readonly value: unknown; readonly copy: unknown }[] = [];
    const keep = (value: unknown): void => void handedOut.push({ value, copy: frozenCopy(value) });
    let seenAlerts = 0;
    let seenTicks = 0;
    for (let poll = 0; poll < 6; poll++) {
      await vi.advanceTimersByTimeAsync(poll === 0 ? 10 : 1_000);
      for (const event of alerts.slice(seenAlerts)) keep(event);
      for (const tick of ticks.slice(seenTicks)) keep(tick);
      [seenAlerts, seenTicks] = [alerts.length, ticks.length];
      keep(runner.targetReports(10));
      // a price tick built later from what the hub remembers (with nobody taking prices, it is built on demand)
      if (poll === 2) release();
      keep(hub.latestPrices());
    }

    expect(alerts.map((e) => (e.type === "alert" ? e.alert.status : e.type))).toEqual(["firing", "resolved"]);
    expect(new Set(ticks.map((tick) => tick.price)).size).toBe(3);
    expect(hub.latestPrices().map((tick) => tick.price)).toEqual(["0.014"]);
    for (const { value, copy } of handedOut) expect(frozenCopy(value)).toEqual(copy);
  });
});
