// Windowed rules judge a move only against a reference near now − window, and name the span they measured.
import { describe, expect, it } from "vitest";
import type { AlertPayload } from "../../src/domain/events.js";
import { createMonitorState, observe, type Observation } from "../../src/domain/monitor.js";
import { PriceHistory } from "../../src/domain/price-history.js";
import type { RuleConfig } from "../../src/domain/rules/index.js";
import {
  describeSpan,
  NO_REFERENCE,
  REFERENCE_TOO_OLD,
  windowReferenceIndex,
  windowToleranceMs,
} from "../../src/domain/window-reference.js";
import { BTC_OFF, T0, obs, p, pairPrice, rule, vault } from "./helpers.js";

const S = 1_000;

describe("windowReferenceIndex", () => {
  // history points (seconds before T0), window, expected: index into the points or a sentinel
  const cases: readonly {
    readonly name: string;
    readonly pointsS: readonly number[];
    readonly windowMs: number;
    readonly expected: number;
  }[] = [
    { name: "no point before the window start", pointsS: [-5, -1], windowMs: 10 * S, expected: NO_REFERENCE },
    { name: "point exactly at now − window", pointsS: [-10, -5], windowMs: 10 * S, expected: 0 },
    { name: "point 2 s early (the floor) is a reference", pointsS: [-12, -5], windowMs: 10 * S, expected: 0 },
    {
      name: "point 2.001 s early for a 10 s window is too old",
      pointsS: [-12.001, -5],
      windowMs: 10 * S,
      expected: REFERENCE_TOO_OLD,
    },
    {
      name: "warm-up candle 29 s old for 10 s",
      pointsS: [-29, -9],
      windowMs: 10 * S,
      expected: REFERENCE_TOO_OLD,
    },
    { name: "newest of several early points", pointsS: [-40, -11, -3], windowMs: 10 * S, expected: 1 },
    { name: "1 min window: 6 s early is within 10 %", pointsS: [-66, -30], windowMs: 60 * S, expected: 0 },
    {
      name: "1 min window: 7 s early is not",
      pointsS: [-67, -30],
      windowMs: 60 * S,
      expected: REFERENCE_TOO_OLD,
    },
  ];
  it.each(cases)("$name", ({ pointsS, windowMs, expected }) => {
    const history = new PriceHistory(windowMs * 2);
    for (const s of pointsS) history.push(T0 + s * S, p("100"));
    expect(windowReferenceIndex(history, T0, windowMs)).toBe(expected);
  });

  it("never asks for more than the history's own resolution", () => {
    const history = new PriceHistory(24 * 3_600 * S); // a 1 d window on the target thins its points to ~85 s
    expect(windowToleranceMs(10 * S, history)).toBeCloseTo(history.minSpacingMs, 6);
    expect(windowToleranceMs(10 * S, new PriceHistory(60 * S))).toBe(2 * S);
    expect(windowToleranceMs(600 * S, new PriceHistory(600 * S))).toBe(60 * S);
  });
});

describe("describeSpan", () => {
  it.each([
    [10 * S, 10 * S, "10s", ""],
    [10 * S, 10_400, "10s", ""],
    [10 * S, 29 * S, "29s", "window 10s, "],
    [10 * S, 8_600, "9s", "window 10s, "],
    [60 * S, 60_200, "1min", ""],
    [60 * S, 64 * S, "64s", "window 1min, "],
    [10 * S, Number.NaN, "10s", ""],
  ])("window %d ms, span %d ms → %s", (windowMs, spanMs, span, window) => {
    expect(describeSpan(windowMs, spanMs)).toEqual({ span, window });
  });
});

// The reproduced scenario and its neighbours, through the monitor API.
const pc10 = rule("price_change", { windowMs: 10 * S, market: "offchain" }, { threshold: 0.02 });
const warm = (atMs: number, price: string): Observation => ({
  kind: "history",
  target: BTC_OFF,
  points: [{ atMs, price: p(price) }],
});
const off = (price: string, atMs: number): Observation => obs.off(pairPrice(price, atMs), atMs);

function runSteps(
  rules: readonly RuleConfig[],
  steps: readonly (readonly [number, Observation])[],
): AlertPayload[] {
  const state = createMonitorState();
  const all: AlertPayload[] = [];
  for (const [atMs, observation] of steps) all.push(...observe(state, observation, rules, atMs).transitions);
  return all;
}

describe("price_change against its reference", () => {
  it("a 10 s window is not judged against a warm-up candle 29 s old (no verdict yet)", () => {
    // the bug: "BTC/USD moved +2.98% in 10s" was computed against this candle
    const transitions = runSteps(
      [pc10],
      [
        [T0, warm(T0 - 29 * S, "100")],
        [T0, off("102.98", T0)],
      ],
    );
    expect(transitions).toEqual([]);
  });

  it("judges once a polled price lies near now − window, and names the real span", () => {
    const transitions = runSteps(
      [pc10],
      [
        [T0, warm(T0 - 29 * S, "100")],
        [T0, off("100", T0)],
        [T0 + 11 * S, off("102.98", T0 + 11 * S)],
      ],
    );
    expect(transitions).toHaveLength(1);
    expect(transitions[0]).toMatchObject({
      status: "firing",
      summary: "BTC/USD moved +2.98% in 11s (window 10s, threshold 2%)",
      context: { spanMs: 11 * S, previousAt: new Date(T0).toISOString() },
    });
  });

  it("keeps the configured window in the summary when the span matches it", () => {
    const transitions = runSteps(
      [pc10],
      [
        [T0, off("100", T0)],
        [T0 + 10 * S, off("103", T0 + 10 * S)],
      ],
    );
    expect(transitions[0]?.summary).toBe("BTC/USD moved +3.00% in 10s (threshold 2%)");
  });

  it("a firing alert holds when the reference falls out of tolerance: no verdict is not all clear", () => {
    const transitions = runSteps(
      [pc10],
      [
        [T0, off("100", T0)],
        [T0 + 10 * S, off("105", T0 + 10 * S)],
        // polls stopped for 30 s: the only point before now − 10 s is 20 s too old
        [T0 + 40 * S, off("105", T0 + 40 * S)],
      ],
    );
    expect(transitions.map((t) => t.status)).toEqual(["firing"]);
  });

  it("vault_share_price is held to the same tolerance", () => {
    const rules = [rule("vault_share_price", { windowMs: 600 * S }, { threshold: 0.01 })];
    const vaultAt = (share: string, atMs: number): readonly [number, Observation] => [
      atMs,
      obs.vault(vault("live", false, share), atMs),
    ];
    // 15 min old reference for a 10 min window (tolerance 60 s): no verdict
    expect(runSteps(rules, [vaultAt("1.00", T0), vaultAt("0.98", T0 + 900 * S)])).toEqual([]);
    const within = runSteps(rules, [vaultAt("1.00", T0), vaultAt("0.98", T0 + 650 * S)]);
    expect(within[0]?.summary).toBe("vault v1 share price fell 2% in 650s (window 10min, threshold 1%)");
  });
});
