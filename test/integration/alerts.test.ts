// The daemon against its simulator with scripted faults: the exact alert sequence each fault family leaves on the journal.
import { afterEach, describe, expect, it } from "vitest";
import type { AlertEvent } from "../../src/domain/events.js";
import { DEFAULT_PAIRS } from "../../src/simulator/catalog.js";
import {
  LEVEL,
  expectOneLogLinePerTransition,
  startTestApp,
  transitionOf,
  type JsonObject,
  type TestApp,
} from "./harness.js";

// STRK/USD has five sources (median = 3rd) and the three fastest update within 2 s, so a spike moves
// the aggregate in one step soon after it is injected.
const PAIR = "STRK/USD";
const SOURCES = DEFAULT_PAIRS.find((p) => p.pairId === PAIR)!.sources;
const OFFCHAIN = { pair: PAIR, market: "offchain", entry_type: "spot" };

let current: TestApp | undefined;
afterEach(async () => {
  await current?.stop();
  current = undefined;
});

async function start(layer: JsonObject): Promise<TestApp> {
  current = await startTestApp(layer);
  return current;
}

const firing = (event: AlertEvent): boolean => event.alert.status === "firing";
const resolvedAfter =
  (previous: AlertEvent) =>
  (event: AlertEvent): boolean =>
    event.seq > previous.seq && event.alert.fingerprint === previous.alert.fingerprint && !firing(event);

/** Wait for a price tick of PAIR observed at least `ms` after start (history long enough for a window). */
function priceHistory(t: TestApp, ms: number): Promise<unknown> {
  return t.waitForEvent(
    (e) => e.type === "price" && e.tick.pair === PAIR && Date.parse(e.tick.observedAt) >= t.startedAtMs + ms,
    5_000,
    `${ms} ms of ${PAIR} prices`,
  );
}

/** The resolve repeats the firing payload's identity and closes it. */
function expectClosedPair(fired: AlertEvent, resolved: AlertEvent): void {
  expect(resolved.alert.fingerprint).toBe(fired.alert.fingerprint);
  expect(resolved.alert.startsAt).toBe(fired.alert.startsAt);
  expect(fired.alert.endsAt).toBeNull();
  expect(Date.parse(resolved.alert.endsAt ?? "")).toBeGreaterThanOrEqual(Date.parse(fired.alert.startsAt));
}

describe("alerts from simulator faults (real daemon, real HTTP)", () => {
  it("price spike: price_change fires on the jump, resolves once the window passed it, and again for the drop back", async () => {
    const t = await start({
      monitors: { offchain: [{ pair: PAIR, periodMs: 100 }] },
      rules: [{ kind: "price_change", windowMs: 1_000, threshold: 0.03 }],
    });
    await priceHistory(t, 1_200);
    const spike = await t.injectFault({ kind: "spike", pair: PAIR, factor: 1.05 });
    const up = await t.waitForAlert(firing, 5_000, "price_change firing on the spike");
    const upResolved = await t.waitForAlert(resolvedAfter(up), 5_000, "price_change resolving");
    await t.removeFault(spike);
    const down = await t.waitForAlert((e) => e.seq > upResolved.seq && firing(e), 5_000, "the drop back");
    const downResolved = await t.waitForAlert(resolvedAfter(down), 5_000, "the drop resolving");

    const labels = { ...OFFCHAIN, window: "1s" };
    expect(t.alertEvents().map(transitionOf)).toEqual([
      { rule: "price_change", status: "firing", reason: "first", labels },
      { rule: "price_change", status: "resolved", reason: "resolved", labels },
      { rule: "price_change", status: "firing", reason: "first", labels },
      { rule: "price_change", status: "resolved", reason: "resolved", labels },
    ]);
    expect(t.alertEvents().map((e) => e.seq)).toEqual([up.seq, upResolved.seq, down.seq, downResolved.seq]);
    expect(up.alert.value).toBeCloseTo(0.05, 2);
    expect(down.alert.value).toBeCloseTo(1 / 1.05 - 1, 2);
    expect(up.alert).toMatchObject({ severity: "warning", threshold: 0.03 });
    expect(up.alert.summary).toMatch(/^STRK\/USD moved \+\d/);
    expect(down.alert.fingerprint).toBe(up.alert.fingerprint);
    expectClosedPair(up, upResolved);
    expectClosedPair(down, downResolved);
    expectOneLogLinePerTransition(t);
  });

  it("frozen sources: stale_price fires once every source of the pair stopped, resolves when they update again", async () => {
    const t = await start({
      monitors: { offchain: [{ pair: PAIR, periodMs: 100 }] },
      rules: [{ kind: "stale_price", threshold: 2_500 }],
    });
    await priceHistory(t, 0);
    const ids: string[] = [];
    for (const source of SOURCES) ids.push(await t.injectFault({ kind: "frozenSource", source, pair: PAIR }));
    const fired = await t.waitForAlert(firing, 6_000, "stale_price firing");
    for (const id of ids) await t.removeFault(id);
    const resolved = await t.waitForAlert(resolvedAfter(fired), 3_000, "stale_price resolving");

    expect(t.alertEvents().map(transitionOf)).toEqual([
      { rule: "stale_price", status: "firing", reason: "first", labels: OFFCHAIN },
      { rule: "stale_price", status: "resolved", reason: "resolved", labels: OFFCHAIN },
    ]);
    expect(fired.alert).toMatchObject({ severity: "critical", threshold: 2_500 });
    expect(fired.alert.value).toBeGreaterThanOrEqual(2_500);
    expect(resolved.alert.value).toBeLessThan(2_500);
    expectClosedPair(fired, resolved);
    expectOneLogLinePerTransition(t);
  });

  it("frozen source: component_deviation fires for the one source left behind by a move, only after forMs", async () => {
    const t = await start({
      monitors: { offchain: [{ pair: PAIR, periodMs: 100 }] },
      // forMs outlasts the slowest source's cadence (3 s): sources still catching up never fire
      rules: [{ kind: "component_deviation", threshold: 0.02, forMs: 4_000 }],
    });
    await priceHistory(t, 0);
    const frozen = await t.injectFault({ kind: "frozenSource", source: "BINANCE", pair: PAIR });
    const spike = await t.injectFault({ kind: "spike", pair: PAIR, factor: 1.05 });
    const injectedAtMs = Date.now();
    const fired = await t.waitForAlert(firing, 9_000, "component_deviation firing");
    expect(Date.now() - injectedAtMs).toBeGreaterThanOrEqual(4_000);
    await t.removeFault(frozen);
    const resolved = await t.waitForAlert(resolvedAfter(fired), 3_000, "component_deviation resolving");
    await t.removeFault(spike);

    const labels = { ...OFFCHAIN, source: "BINANCE" };
    expect(t.alertEvents().map(transitionOf)).toEqual([
      { rule: "component_deviation", status: "firing", reason: "first", labels },
      { rule: "component_deviation", status: "resolved", reason: "resolved", labels },
    ]);
    expect(fired.alert.value).toBeCloseTo(1 / 1.05 - 1, 2);
    expect(fired.alert.severity).toBe("warning");
    expectClosedPair(fired, resolved);
    expectOneLogLinePerTransition(t);
  });

  it("endpoint outage (503): upstream_error fires after 3 failures, mutes stale_price, resolves on recovery", async () => {
    const t = await start({
      monitors: { offchain: [{ pair: PAIR, periodMs: 100 }] },
      rules: [
        { kind: "upstream_error", threshold: 3 },
        { kind: "stale_price", threshold: 3_000 },
      ],
    });
    await priceHistory(t, 0);
    const outage = await t.injectFault({
      kind: "outage",
      status: 503,
      endpoint: "pair_price",
      pair: PAIR,
      retryAfterS: 0,
    });
    const fired = await t.waitForAlert(firing, 5_000, "upstream_error firing");
    expect(fired.alert.value).toBe(3);
    expect(fired.alert.context).toMatchObject({ failures: 3, lastErrorCode: "PM_ERR_UPSTREAM_HTTP" });

    // The last good price ages past the stale threshold while the target keeps failing: stale_price's
    // condition holds, but the firing upstream_error inhibits it.
    const lastGood = t.app.events.latestPrices().find((tick) => tick.pair === PAIR)!;
    const staleSinceMs = Date.parse(lastGood.timestamp) + 3_000;
    await t.logs.waitFor(
      (line) => line.msg === "poll failed" && line.time >= staleSinceMs + 1_000,
      8_000,
      "a failed poll 1 s after the price went stale",
    );
    expect(t.alertEvents().filter((e) => e.alert.rule === "stale_price")).toEqual([]);

    await t.removeFault(outage);
    const resolved = await t.waitForAlert(resolvedAfter(fired), 3_000, "upstream_error resolving");
    await t.logs.waitFor((line) => line.msg === "poll recovered", 1_000, "poll recovered");

    const labels = { endpoint: `offchain:${PAIR}:spot:median:1s`, pair: PAIR, market: "offchain" };
    expect(t.alertEvents().map(transitionOf)).toEqual([
      { rule: "upstream_error", status: "firing", reason: "first", labels },
      { rule: "upstream_error", status: "resolved", reason: "resolved", labels },
    ]);
    expect(fired.alert.severity).toBe("critical");
    expectClosedPair(fired, resolved);
    // the failure burst is logged once at warn, the rest at debug
    const failures = t.logs.lines.filter((line) => line.msg === "poll failed");
    expect(failures.filter((line) => line.level === LEVEL.warn)).toHaveLength(1);
    expect(failures.length).toBeGreaterThan(3);
    expectOneLogLinePerTransition(t);
  });

  it("publisher frozen: publisher_stale fires for that publisher only, resolves when it pushes again", async () => {
    // Publishers push on a 60 s heartbeat: run the market 20× faster (the daemon's clock follows it).
    const t = await start({
      upstream: { simulator: { speed: 20 } },
      monitors: { publishers: [{ network: "starknet-mainnet", publisherType: "Spot", periodMs: 200 }] },
      // above the heartbeat, so no publisher that keeps pushing can reach it
      rules: [{ kind: "publisher_stale", threshold: 75_000 }],
    });
    const frozen = await t.injectFault({
      kind: "frozenPublisher",
      publisher: "FOURLEAF",
      network: "starknet-mainnet",
    });
    const fired = await t.waitForAlert(firing, 8_000, "publisher_stale firing");
    await t.removeFault(frozen);
    const resolved = await t.waitForAlert(resolvedAfter(fired), 3_000, "publisher_stale resolving");

    const labels = { network: "starknet-mainnet", entry_type: "spot", publisher: "FOURLEAF" };
    expect(t.alertEvents().map(transitionOf)).toEqual([
      { rule: "publisher_stale", status: "firing", reason: "first", labels },
      { rule: "publisher_stale", status: "resolved", reason: "resolved", labels },
    ]);
    expect(fired.alert.value).toBeGreaterThanOrEqual(75_000);
    expect(resolved.alert.value).toBeLessThan(75_000);
    expect(fired.alert.severity).toBe("warning");
    expectClosedPair(fired, resolved);
    expectOneLogLinePerTransition(t);
  });

  it("vault paused: vault_status fires for the paused vault only, resolves when deposits reopen", async () => {
    const t = await start({
      monitors: {
        vaults: [
          { id: "pragma-btc-vault", periodMs: 100 },
          { id: "pragma-eth-vault", periodMs: 100 },
        ],
      },
      rules: [{ kind: "vault_status" }],
    });
    const paused = await t.injectFault({ kind: "vaultPaused", vault: "pragma-btc-vault" });
    const fired = await t.waitForAlert(firing, 3_000, "vault_status firing");
    await t.removeFault(paused);
    const resolved = await t.waitForAlert(resolvedAfter(fired), 3_000, "vault_status resolving");

    const labels = { vault: "pragma-btc-vault" };
    expect(t.alertEvents().map(transitionOf)).toEqual([
      { rule: "vault_status", status: "firing", reason: "first", labels },
      { rule: "vault_status", status: "resolved", reason: "resolved", labels },
    ]);
    expect(fired.alert).toMatchObject({ severity: "critical", value: 1 });
    expect(fired.alert.context).toMatchObject({ depositsPaused: true });
    expect(resolved.alert.context).toMatchObject({ status: "live", depositsPaused: false });
    expectClosedPair(fired, resolved);
    expectOneLogLinePerTransition(t);
  });

  it("funding spike: funding_rate fires for the spiked source only, resolves when the rate is back", async () => {
    // Funding points are one a minute: run the market 20× faster (the daemon's clock follows it).
    const t = await start({
      upstream: { simulator: { speed: 20 } },
      monitors: {
        funding: [
          { pair: "BTC/USD", source: "HYPERLIQUID", periodMs: 200 },
          { pair: "BTC/USD", source: "PARADEX", periodMs: 200 },
        ],
      },
      rules: [{ kind: "funding_rate", threshold: 0.005 }],
    });
    const spike = await t.injectFault({
      kind: "fundingSpike",
      pair: "BTC/USD",
      source: "HYPERLIQUID",
      hourlyRate: 0.01,
    });
    const fired = await t.waitForAlert(firing, 8_000, "funding_rate firing");
    await t.removeFault(spike);
    const resolved = await t.waitForAlert(resolvedAfter(fired), 3_000, "funding_rate resolving");

    const labels = { pair: "BTC/USD", source: "HYPERLIQUID" };
    expect(t.alertEvents().map(transitionOf)).toEqual([
      { rule: "funding_rate", status: "firing", reason: "first", labels },
      { rule: "funding_rate", status: "resolved", reason: "resolved", labels },
    ]);
    expect(fired.alert).toMatchObject({ severity: "warning", value: 0.01, threshold: 0.005 });
    expect(Math.abs(resolved.alert.value ?? 1)).toBeLessThan(0.005);
    expectClosedPair(fired, resolved);
    expectOneLogLinePerTransition(t);
  });
});
