// A target none of whose windows is longer than the time between the candle closes its history keeps fetches no candles
// (start, reload, takeover) and is named once, grouped, in the warm-up notes; a target with such a window is warmed.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createEvaluator } from "../../src/domain/evaluator.js";
import { createMonitorState } from "../../src/domain/monitor.js";
import type { RuleConfig } from "../../src/domain/rules/index.js";
import type { TargetSpec } from "../../src/domain/types.js";
import { createMonitorRunner, type MonitorRunner } from "../../src/pipeline/monitor-runner.js";
import { warmupNotes, warmupSkip } from "../../src/pipeline/warmup.js";
import { rule } from "../domain/helpers.js";
import { offchainMonitors, recordingDeps } from "./helpers.js";

const S = 1_000;
const warmup = { enabled: true, interval: "1min", lookbackMs: 3_600_000 } as const;
const change = (id: string, windowMs: number, pairs: readonly string[] = []): RuleConfig =>
  rule("price_change", { market: "offchain", windowMs }, { id, threshold: 0.02, pairs });
/** The shipped price windows (config/default.json): 10 s and 1 min. */
const SHIPPED = [change("price_change_10s", 10 * S), change("price_change_1min", 60 * S)];
const WITH_HOUR = [...SHIPPED, change("price_change_1h", 3_600 * S)];

function offchain(pair: string, fields: Partial<Extract<TargetSpec, { kind: "offchain" }>> = {}) {
  return {
    kind: "offchain" as const,
    id: `offchain:${pair}`,
    pair,
    entryType: "spot" as const,
    aggregation: "median" as const,
    interval: "1s" as const,
    expiry: null,
    ...fields,
  };
}

describe("warmupSkip", () => {
  it.each([
    {
      name: "shipped windows on 1min candles",
      spec: offchain("BTC/USD"),
      rules: SHIPPED,
      skip: "windows_too_short",
    },
    { name: "with a 1 h window", spec: offchain("BTC/USD"), rules: WITH_HOUR, skip: null },
    {
      name: "a perp target",
      spec: offchain("BTC/USD", { entryType: "perp" }),
      rules: WITH_HOUR,
      skip: "not_spot_median",
    },
    {
      name: "a twap target",
      spec: offchain("BTC/USD", { aggregation: "twap" }),
      rules: WITH_HOUR,
      skip: "not_spot_median",
    },
    {
      name: "no windowed rule",
      spec: offchain("BTC/USD"),
      rules: [rule("stale_price", { market: "offchain" }, { threshold: 30_000 })],
      skip: "no_window",
    },
    {
      name: "the 1 h window is for another pair",
      spec: offchain("BTC/USD"),
      rules: [...SHIPPED, change("price_change_1h", 3_600 * S, ["ETH/USD"])],
      skip: "windows_too_short",
    },
    {
      name: "the 1 h window is for this pair",
      spec: offchain("ETH/USD"),
      rules: [...SHIPPED, change("price_change_1h", 3_600 * S, ["ETH/USD"])],
      skip: null,
    },
    {
      name: "the 1 h window is disabled",
      spec: offchain("BTC/USD"),
      rules: [...SHIPPED, { ...change("price_change_1h", 3_600 * S), enabled: false }],
      skip: "windows_too_short",
    },
  ])("$name: $skip", ({ spec, rules, skip }) => {
    expect(warmupSkip(spec, createEvaluator(rules).rulesFor(spec), "1min")).toBe(skip);
  });

  it.each([
    { interval: "1min", windowS: 61, skip: null },
    { interval: "1min", windowS: 60, skip: "windows_too_short" },
    // 1min candles serve a 5 min window half the time of its first 5 min (tolerance 30 s of each minute)
    { interval: "1min", windowS: 300, skip: null },
    // tolerance 12 min of each 15: about 80 % of the time
    { interval: "15min", windowS: 7_200, skip: null },
    { interval: "15min", windowS: 900, skip: "windows_too_short" },
    { interval: "10s", windowS: 11, skip: null },
    { interval: "1h", windowS: 3_601, skip: null },
  ] as const)("$interval candles, a $windowS s window: $skip", ({ interval, windowS, skip }) => {
    const spec = offchain("BTC/USD");
    const rules = createEvaluator([change("c", windowS * S)]).rulesFor(spec);
    expect(warmupSkip(spec, rules, interval)).toBe(skip);
  });

  it("a 1 d rule on another pair thins this target's closes to 2 min apart: 10 min is warmed, 2 min is not", () => {
    const spec = offchain("BTC/USD");
    const day = change("price_change_1d", 86_400 * S, ["ETH/USD"]);
    const at = (windowMs: number) => createEvaluator([day, change("c", windowMs)]).rulesFor(spec);
    expect(at(10 * 60 * S).retainMs).toBe(86_400 * S);
    expect(warmupSkip(spec, at(10 * 60 * S), "1min")).toBeNull();
    expect(warmupSkip(spec, at(2 * 60 * S), "1min")).toBe("windows_too_short");
  });
});

describe("warmupNotes", () => {
  const pairs = (count: number) =>
    Array.from({ length: count }, (_, i) => ({ pair: `P${i}/USD`, periodMs: 1_000 }));

  it("names 500 targets of the shipped windows in one line, with their count", () => {
    expect(warmupNotes({ ...offchainMonitors(pairs(500)), warmup }, SHIPPED)).toEqual([
      "500 off-chain target(s) not warmed from 1min candles (no window of their rules (10s, 1min) is longer than the " +
        "1min between two closes: a window's own polls serve it a window after they start, so closes would add " +
        "verdicts for at most one close spacing); their history fills from their own data: " +
        "offchain:P0/USD:spot:median:1s (monitors.offchain[0]), offchain:P1/USD:spot:median:1s (monitors.offchain[1]), " +
        "offchain:P2/USD:spot:median:1s (monitors.offchain[2]), offchain:P3/USD:spot:median:1s (monitors.offchain[3]), " +
        "offchain:P4/USD:spot:median:1s (monitors.offchain[4]) and 495 more",
    ]);
  });

  it("names the kept close spacing when a longer rule's retention thins the closes", () => {
    const rules = [...SHIPPED, change("price_change_1d", 86_400 * S, ["ETH/USD"])];
    expect(warmupNotes({ ...offchainMonitors(pairs(1)), warmup }, rules)).toEqual([
      "1 off-chain target(s) not warmed from 1min candles (no window of their rules (10s, 1min) is longer than the " +
        "2min between two closes their history keeps (a 1d retention thins the 1min closes): a window's own polls " +
        "serve it a window after they start, so closes would add verdicts for at most one close spacing); their " +
        "history fills from their own data: offchain:P0/USD:spot:median:1s (monitors.offchain[0])",
    ]);
  });

  it("one line per reason; nothing for warmed targets, nor when warm-up is off", () => {
    const monitors = offchainMonitors(pairs(3));
    const perp = { ...monitors.offchain[0]!, entryType: "perp" as const };
    const rules = [...SHIPPED, change("price_change_1h", 3_600 * S, ["P2/USD"])];
    const notes = warmupNotes({ ...monitors, offchain: [...monitors.offchain, perp], warmup }, rules);
    expect(notes).toHaveLength(2);
    expect(notes[0]).toMatch(
      /^2 off-chain target\(s\) not warmed from 1min candles \(no window of their rules \(10s, 1min\) is longer/,
    );
    expect(notes[0]).toMatch(
      /: offchain:P0\/USD:spot:median:1s \(monitors\.offchain\[0\]\), offchain:P1\/USD:spot:median:1s \(monitors\.offchain\[1\]\)$/,
    );
    expect(notes[1]).toBe(
      "1 off-chain target(s) not warmed from 1min candles (upstream candles are spot medians, these targets are not); " +
        "their history fills from their own data: offchain:P0/USD:perp:median:1s (monitors.offchain[3])",
    );
    expect(warmupNotes({ ...monitors, warmup: { ...warmup, enabled: false } }, rules)).toEqual([]);
  });
});

describe("candle requests of the runner", () => {
  let runner: MonitorRunner | undefined;
  beforeEach(() => vi.useFakeTimers({ now: Date.UTC(2026, 10, 27, 12) }));
  afterEach(() => {
    runner?.stop();
    vi.useRealTimers();
  });

  const FIRST = [{ pair: "A/USD", periodMs: 1_000 }];
  const ALL = [...FIRST, { pair: "B/USD", periodMs: 1_000 }];
  const owns = (pairs: readonly { pair: string }[]) => (spec: TargetSpec) =>
    "pair" in spec && pairs.some((m) => m.pair === spec.pair);

  it.each([
    { path: "start", rules: SHIPPED, warmed: [] },
    { path: "start", rules: WITH_HOUR, warmed: ["A/USD", "B/USD"] },
    { path: "reload", rules: SHIPPED, warmed: [] },
    { path: "reload", rules: WITH_HOUR, warmed: ["B/USD"] },
    { path: "takeover", rules: SHIPPED, warmed: [] },
    { path: "takeover", rules: WITH_HOUR, warmed: ["B/USD"] },
  ])("$path, $rules.length windows: candles fetched for $warmed", async ({ path, rules, warmed }) => {
    const candleCalls: string[] = [];
    runner = createMonitorRunner(recordingDeps(candleCalls), createMonitorState());
    if (path === "start") runner.update({ ...offchainMonitors(ALL), warmup }, rules);
    else if (path === "reload") runner.update({ ...offchainMonitors(FIRST), warmup }, rules);
    else {
      runner.restrict(owns(FIRST), false);
      runner.update({ ...offchainMonitors(ALL), warmup }, rules);
    }
    await vi.advanceTimersByTimeAsync(5_000);
    const before = candleCalls.length;
    if (path === "reload") runner.update({ ...offchainMonitors(ALL), warmup }, rules);
    if (path === "takeover") runner.restrict(owns(ALL), false);
    await vi.advanceTimersByTimeAsync(5_000);
    // the targets started in the phase: both at start, B/USD on reload and takeover
    expect(candleCalls.slice(path === "start" ? 0 : before).sort()).toEqual(warmed);
  });
});
