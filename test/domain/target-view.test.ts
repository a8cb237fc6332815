// What the operator API reads of a target's data: labels, latest value, data time and a bounded history, per target kind.
import { describe, expect, it } from "vitest";
import type { Observation } from "../../src/domain/monitor.js";
import { applyPoll, createTargetData, setHistoryRetention } from "../../src/domain/target-state.js";
import {
  describeTargetData,
  describeTargetLabels,
  evenlySpacedIndices,
  type TargetDataView,
} from "../../src/domain/target-view.js";
import type { TargetSpec } from "../../src/domain/types.js";
import {
  BTC_OFF,
  BTC_ON,
  FUND,
  PUBS,
  T0,
  VAULT,
  entrySet,
  obs,
  pairPrice,
  publisher,
  vault,
} from "./helpers.js";

describe("evenlySpacedIndices", () => {
  it.each<[number, number, readonly number[]]>([
    [0, 5, []],
    [3, 0, []],
    [3, 5, [0, 1, 2]],
    [5, 5, [0, 1, 2, 3, 4]],
    [10, 1, [9]],
    [10, 2, [0, 9]],
    [10, 4, [0, 3, 6, 9]],
    [1000, 3, [0, 500, 999]],
    [7, 2.9, [0, 6]],
  ])("%i items, at most %d → %j", (count, max, expected) => {
    expect(evenlySpacedIndices(count, max)).toEqual(expected);
  });

  it("never exceeds the bound, keeps first and last, and never repeats an index", () => {
    for (const count of [121, 500, 1024])
      for (const max of [2, 60, 120]) {
        const indices = evenlySpacedIndices(count, max);
        expect(indices.length).toBe(max);
        expect(indices[0]).toBe(0);
        expect(indices.at(-1)).toBe(count - 1);
        expect(new Set(indices).size).toBe(indices.length);
      }
  });
});

describe("describeTargetLabels", () => {
  it.each<[TargetSpec, Record<string, string>]>([
    [
      BTC_OFF,
      { pair: "BTC/USD", market: "offchain", entry_type: "spot", aggregation: "median", interval: "1s" },
    ],
    [
      { ...BTC_OFF, entryType: "future", expiry: "20261231" },
      {
        pair: "BTC/USD",
        market: "offchain",
        entry_type: "future",
        aggregation: "median",
        interval: "1s",
        expiry: "20261231",
      },
    ],
    [BTC_ON, { pair: "BTC/USD", market: "onchain", network: "starknet-mainnet", aggregation: "median" }],
    [PUBS, { network: "starknet-mainnet", entry_type: "spot", publisher_type: "Spot" }],
    [FUND, { pair: "BTC/USD", source: "HYPERLIQUID" }],
    [VAULT, { vault: "v1" }],
  ])("%j", (spec, expected) => {
    expect(describeTargetLabels(spec)).toEqual(expected);
  });
});

/** The view of a target after `observations` (its history kept `retainMs` back, 0 = none). */
function viewAfter(spec: TargetSpec, observations: readonly Observation[], retainMs = 0): TargetDataView {
  const data = createTargetData(spec);
  setHistoryRetention(data, retainMs, () => 0);
  for (const observation of observations) if (observation.kind !== "history") applyPoll(data, observation);
  return describeTargetData(data, 3);
}

const rates = (points: readonly (readonly [number, number])[]) =>
  obs.funding(
    points.map(([offsetMs, hourlyRate]) => ({
      pair: "BTC/USD",
      source: "HYPERLIQUID",
      timestampMs: T0 + offsetMs,
      hourlyRate,
    })),
    T0 + 60_000,
  );

describe("describeTargetData", () => {
  it.each<[string, TargetSpec, readonly Observation[], number, Omit<TargetDataView, "spec">]>([
    ["no poll yet", BTC_OFF, [], 60_000, { lastSuccessMs: null, dataAtMs: null, latest: null, history: [] }],
    [
      "only failures",
      BTC_OFF,
      [obs.offFail(T0)],
      60_000,
      { lastSuccessMs: null, dataAtMs: null, latest: null, history: [] },
    ],
    [
      "off-chain price with a history ring, downsampled to 3 points, oldest first",
      BTC_OFF,
      [0, 1, 2, 3, 4].map((i) => obs.off(pairPrice(`${100 + i}.5`, T0 + i * 1000), T0 + i * 1000 + 50)),
      60_000,
      {
        lastSuccessMs: T0 + 4050,
        dataAtMs: T0 + 4000,
        latest: { kind: "price", price: "104.5", comparable: true, atMs: T0 + 4000, numSources: 5 },
        history: [
          { atMs: T0, value: 100.5 },
          { atMs: T0 + 2000, value: 102.5 },
          { atMs: T0 + 4000, value: 104.5 },
        ],
      },
    ],
    [
      "off-chain price without a ring (no windowed rule): no history",
      BTC_OFF,
      [obs.off(pairPrice("100", T0), T0 + 10)],
      0,
      {
        lastSuccessMs: T0 + 10,
        dataAtMs: T0,
        latest: { kind: "price", price: "100", comparable: true, atMs: T0, numSources: 5 },
        history: [],
      },
    ],
    [
      "the latest success stays after a failure",
      BTC_OFF,
      [obs.off(pairPrice("100", T0), T0 + 10), obs.offFail(T0 + 1000)],
      0,
      {
        lastSuccessMs: T0 + 10,
        dataAtMs: T0,
        latest: { kind: "price", price: "100", comparable: true, atMs: T0, numSources: 5 },
        history: [],
      },
    ],
    [
      "on-chain price whose decimals are unknown is not comparable",
      BTC_ON,
      [obs.on(entrySet("100", T0, [], { decimalsKnown: false }), T0 + 5)],
      0,
      {
        lastSuccessMs: T0 + 5,
        dataAtMs: T0,
        latest: { kind: "price", price: "100", comparable: false, atMs: T0, numSources: 5 },
        history: [],
      },
    ],
    [
      "publishers: counts and the newest update of any of them",
      PUBS,
      [
        obs.pubs(
          [
            publisher("A", T0 - 5000, [
              ["BTC/USD", T0 - 5000],
              ["ETH/USD", T0 - 6000],
            ]),
            publisher("B", T0 - 1000, [["BTC/USD", T0 - 1000]]),
            publisher("C", null),
          ],
          T0,
        ),
      ],
      0,
      {
        lastSuccessMs: T0,
        dataAtMs: T0 - 1000,
        latest: { kind: "publishers", publishers: 3, feeds: 3, newestUpdateMs: T0 - 1000 },
        history: [],
      },
    ],
    [
      "funding: the latest rate, and the poll's points as history (unreadable rates left out)",
      FUND,
      [
        rates([
          [0, 0.0001],
          [1000, Number.NaN],
          [2000, 0.0002],
          [3000, 0.0003],
          [4000, 0.0004],
        ]),
      ],
      0,
      {
        lastSuccessMs: T0 + 60_000,
        dataAtMs: T0 + 4000,
        latest: { kind: "funding", hourlyRate: 0.0004, atMs: T0 + 4000 },
        history: [
          { atMs: T0, value: 0.0001 },
          { atMs: T0 + 3000, value: 0.0003 },
          { atMs: T0 + 4000, value: 0.0004 },
        ],
      },
    ],
    [
      "vault: its status and share price as sent; its data is as old as its poll",
      VAULT,
      [obs.vault(vault("paused", true, "1.0123"), T0 + 7)],
      600_000,
      {
        lastSuccessMs: T0 + 7,
        dataAtMs: T0 + 7,
        latest: { kind: "vault", status: "paused", sharePrice: "1.0123", tvl: "1", depositsPaused: true },
        history: [{ atMs: T0 + 7, value: 1.0123 }],
      },
    ],
  ])("%s", (_name, spec, observations, retainMs, expected) => {
    expect(viewAfter(spec, observations, retainMs)).toEqual({ spec, ...expected });
  });
});
