// Target rows: which alerts concern a target, its state (most urgent first), its value and the time of its data.
import { describe, expect, it } from "vitest";
import { applyRead, applyTick, INITIAL_STATE, type PageState } from "../../web/src/store.js";
import { alertConcernsTarget, targetRows, targetState } from "../../web/src/targets.js";
import { alert, target, tick } from "./frames.js";

const btcSpot = target();
const ethOnchain = target({
  id: "onchain:ETH/USD:sepolia:median",
  kind: "onchain",
  labels: { pair: "ETH/USD", market: "onchain", network: "sepolia", aggregation: "median" },
});
const publishers = target({
  id: "publishers:sepolia:spot",
  kind: "publishers",
  labels: { network: "sepolia", entry_type: "spot", publisher_type: "SPOT" },
});
const funding = target({
  id: "funding:BTC/USD:hyperliquid",
  kind: "funding",
  labels: { pair: "BTC/USD", source: "hyperliquid" },
});

describe("alertConcernsTarget", () => {
  it.each<[string, Record<string, string>, string, boolean]>([
    [
      "upstream_error names its target",
      { endpoint: btcSpot.id, pair: "BTC/USD", market: "offchain" },
      btcSpot.id,
      true,
    ],
    [
      "…and no other target of the pair",
      { endpoint: "offchain:BTC/USD:perp:median:1min", pair: "BTC/USD" },
      btcSpot.id,
      false,
    ],
    [
      "a spot move concerns the spot target",
      { pair: "BTC/USD", market: "offchain", entry_type: "spot", window: "10s" },
      btcSpot.id,
      true,
    ],
    [
      "not the on-chain one (market differs)",
      { pair: "ETH/USD", market: "offchain", entry_type: "spot" },
      ethOnchain.id,
      false,
    ],
    [
      "an on-chain alert of the network",
      { pair: "ETH/USD", market: "onchain", network: "sepolia" },
      ethOnchain.id,
      true,
    ],
    [
      "a publisher alert concerns the network's publisher list",
      { network: "sepolia", publisher: "AVNU" },
      publishers.id,
      true,
    ],
    [
      "…not an on-chain pair on that network",
      { network: "sepolia", publisher: "AVNU" },
      ethOnchain.id,
      false,
    ],
    [
      "an off-chain source deviation is not the funding target",
      { pair: "BTC/USD", market: "offchain", entry_type: "spot", source: "hyperliquid" },
      funding.id,
      false,
    ],
    ["funding alert of its pair and source", { pair: "BTC/USD", source: "hyperliquid" }, funding.id, true],
    ["an alert with no identity label concerns nothing", { sink: "hook" }, btcSpot.id, false],
  ])("%s", (_name, labels, targetId, expected) => {
    const t = [btcSpot, ethOnchain, publishers, funding].find((candidate) => candidate.id === targetId)!;
    expect(alertConcernsTarget({ labels }, t)).toBe(expected);
  });
});

describe("targetState", () => {
  const calm = {
    alerts: [],
    lastPollFailed: false,
    polled: true,
    ticking: true,
    sinceTickMs: 500,
    periodMs: 1_000,
  };
  it.each<[string, Partial<Parameters<typeof targetState>[0]>, string]>([
    ["polled, ticking, nothing firing", {}, "ok"],
    ["never polled", { polled: false, sinceTickMs: null }, "pending"],
    ["no tick for three periods", { sinceTickMs: 5_001 }, "stale"],
    ["a stale_price alert reads as stale, not firing", { alerts: [alert({ rule: "stale_price" })] }, "stale"],
    ["an alert firing", { alerts: [alert()] }, "firing"],
    ["every firing alert silenced", { alerts: [alert({ silencedBy: ["s1"] })] }, "silenced"],
    [
      "one silenced, one not",
      { alerts: [alert({ silencedBy: ["s1"] }), alert({ fingerprint: "b" })] },
      "firing",
    ],
    [
      "its upstream_error firing wins",
      { alerts: [alert(), alert({ rule: "upstream_error" })] },
      "upstream_error",
    ],
    ["latest poll failed and no tick since", { lastPollFailed: true, ticking: false }, "upstream_error"],
    ["latest poll failed but ticks came since", { lastPollFailed: true, ticking: true }, "ok"],
  ])("%s", (_name, input, expected) => {
    expect(targetState({ ...calm, ...input })).toBe(expected);
  });
});

describe("targetRows", () => {
  const readAtMs = Date.parse("2026-11-22T10:00:00.000Z");
  const withTargets = (state: PageState): PageState =>
    applyRead(state, { resource: "targets", value: [btcSpot, ethOnchain] }, readAtMs);

  it("shows what the read gave until a tick comes, then the tick's price and time", () => {
    let state = withTargets(INITIAL_STATE);
    const [before] = targetRows(state, readAtMs + 2_000);
    expect(before).toMatchObject({
      id: btcSpot.id,
      title: "BTC/USD",
      value: "86000.50",
      dataAtMs: readAtMs - 500,
      state: "ok",
    });
    expect(before?.detail).toBe("offchain · spot · median · 1min");
    state = applyTick(state, tick("2026-11-22T10:00:03.000Z", "86123.456"), readAtMs + 3_000);
    const [after] = targetRows(state, readAtMs + 3_500);
    expect(after).toMatchObject({ value: "86123.46", dataAtMs: Date.parse("2026-11-22T10:00:03.000Z") });
  });

  it("attaches firing alerts to their targets", () => {
    let state = withTargets(INITIAL_STATE);
    state = { ...state, alerts: new Map([["fp-btc", alert()]]) };
    const rows = targetRows(state, readAtMs);
    expect(rows.map((row) => [row.id, row.state, row.alerts.length])).toEqual([
      ["offchain:BTC/USD:spot:median:1min", "firing", 1],
      ["onchain:ETH/USD:sepolia:median", "ok", 0],
    ]);
  });

  it("lists the targets the API gave once it answered; until then, those known from their ticks", () => {
    const ticked = applyTick(INITIAL_STATE, tick("2026-11-22T10:00:03.000Z", "1.5", "SOL/USD"), readAtMs);
    expect(targetRows(ticked, readAtMs).map((row) => [row.id, row.title, row.value, row.state])).toEqual([
      ["offchain:SOL/USD:spot:median:1min", "SOL/USD", "1.5000", "ok"],
    ]);
    // a target gone from the config (no longer listed) does not linger from its old ticks
    expect(targetRows(withTargets(ticked), readAtMs).map((row) => row.id)).toEqual([
      btcSpot.id,
      ethOnchain.id,
    ]);
  });
});
