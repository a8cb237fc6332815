// The cause rules in virtual time: their conditions and hysteresis, children linked by causedBy, parents
// resolving when the cause clears, children that outlive their parent, and a restart in the middle.
import { describe, expect, it } from "vitest";
import type { AlertPayload } from "../../src/domain/events.js";
import {
  createMonitorState,
  exportAlertState,
  importAlertState,
  observe,
  restoreAnnounced,
  retainTargets,
  tick,
  type MonitorState,
  type Observation,
} from "../../src/domain/monitor.js";
import type { RuleConfig } from "../../src/domain/rules/index.js";
import type { TargetSpec } from "../../src/domain/types.js";
import { parsePersistedAlertState } from "../../src/state/alert-checkpoint.js";
import { BTC_OFF, T0, http500, obs, pairPrice, publisher, refused, rule } from "./helpers.js";

const offchain = (pair: string): Extract<TargetSpec, { kind: "offchain" }> => ({
  ...BTC_OFF,
  id: `offchain:${pair}`,
  pair,
});
const PAIRS = ["BTC/USD", "ETH/USD", "SOL/USD", "STRK/USD"];
const TARGETS = PAIRS.map(offchain);

const fail = (target: TargetSpec, atMs: number, error = http500): Observation =>
  ({ kind: "offchain", target, result: { ok: false, error }, observedAtMs: atMs }) as Observation;
const ok = (
  target: Extract<TargetSpec, { kind: "offchain" }>,
  atMs: number,
  price = "100",
  sources: readonly (readonly [string, string])[] = [],
) => obs.off(pairPrice(price, atMs, sources), atMs, target);

/** A monitor driven step by step, every transition kept. */
class Run {
  state: MonitorState = createMonitorState();
  readonly transitions: AlertPayload[] = [];
  constructor(public rules: readonly RuleConfig[]) {}
  observe(observation: Observation, atMs: number): AlertPayload[] {
    const { state, transitions } = observe(this.state, observation, this.rules, atMs);
    return this.keep(state, transitions);
  }
  tick(atMs: number): AlertPayload[] {
    const { state, transitions } = tick(this.state, this.rules, atMs);
    return this.keep(state, transitions);
  }
  private keep(state: MonitorState, transitions: readonly AlertPayload[]): AlertPayload[] {
    this.state = state;
    this.transitions.push(...transitions);
    return [...transitions];
  }
}

/** "rule:reason[<-parent rule]" for each transition; a child's parent named by its rule. */
function describeAll(transitions: readonly AlertPayload[], all: readonly AlertPayload[]): string[] {
  const ruleOf = new Map(all.map((t) => [t.fingerprint, t.rule]));
  return transitions.map(
    (t) =>
      `${t.rule}${t.labels["pair"] === undefined ? "" : `(${t.labels["pair"]})`}:${t.reason}` +
      (t.causedBy === undefined ? "" : `<-${ruleOf.get(t.causedBy) ?? "?"}`),
  );
}

const upstreamError = rule("upstream_error", {}, { threshold: 3, severity: "critical" });
const upstreamDown = (extra: Partial<RuleConfig> = {}, minFraction = 0.5, windowMs = 5_000) =>
  rule(
    "upstream_down",
    { minFraction, windowMs },
    { threshold: 3, clearThreshold: 1, severity: "critical", ...extra },
  );

describe("upstream_down", () => {
  /** Every target polled fine at T0, then failing each second from T0+1s for `failedPolls` polls. */
  function outage(rules: readonly RuleConfig[], failedPolls: number, error = http500): Run {
    const run = new Run(rules);
    for (const target of TARGETS) run.observe(ok(target, T0), T0);
    for (let i = 1; i <= failedPolls; i++)
      for (const target of TARGETS) run.observe(fail(target, T0 + i * 1_000, error), T0 + i * 1_000);
    return run;
  }

  it("fires once most targets fail with one kind of error, before any upstream_error, which it adopts", () => {
    const run = outage([upstreamError, upstreamDown()], 3);
    expect(describeAll(run.transitions, run.transitions)).toEqual([
      "upstream_down:first",
      ...PAIRS.map((pair) => `upstream_error(${pair}):first<-upstream_down`),
    ]);
    const parent = run.transitions[0]!;
    expect(parent.summary).toBe("Pragma API failing (HTTP 500): 3 of 4 targets failing since 10:00:01");
    expect(parent.labels).toEqual({});
    expect(parent.value).toBe(3);
  });

  it("names a refused connection by its errno and says unreachable", () => {
    const run = outage([upstreamError, upstreamDown()], 1, refused);
    expect(run.transitions[0]?.summary).toBe(
      "Pragma API unreachable (ECONNREFUSED): 3 of 4 targets failing since 10:00:01",
    );
  });

  it("stays silent below the count, and below the fraction of the targets judged", () => {
    const two = new Run([upstreamError, upstreamDown()]);
    for (const target of TARGETS) two.observe(ok(target, T0), T0);
    for (let i = 1; i <= 3; i++)
      for (const target of TARGETS.slice(0, 2)) two.observe(fail(target, T0 + i * 1_000), T0 + i * 1_000);
    expect(describeAll(two.transitions, two.transitions)).toEqual([
      "upstream_error(BTC/USD):first",
      "upstream_error(ETH/USD):first",
    ]);
    // 3 of 4 failing, but the fraction asks for 80 %
    const fraction = outage([upstreamError, upstreamDown({}, 0.8)], 3);
    expect(fraction.transitions.filter((t) => t.rule === "upstream_down")).toHaveLength(1);
    const strict = new Run([upstreamError, upstreamDown({}, 0.8)]);
    for (const target of TARGETS) strict.observe(ok(target, T0), T0);
    for (const target of TARGETS.slice(0, 3)) strict.observe(fail(target, T0 + 1_000), T0 + 1_000);
    expect(strict.transitions).toEqual([]);
    // a healthy target polled longer than windowMs ago is not judged: 3 of 3
    strict.tick(T0 + 6_500);
    expect(describeAll(strict.transitions, strict.transitions)).toEqual(["upstream_down:first"]);
  });

  it("counts healthy slow-polled targets within windowMs, so a few timeouts among many targets are not 'most'", () => {
    const many = ["A", "B", "C", "D", "E", "F", "G", "H"].map((p) => offchain(`${p}/USD`));
    /** Eight targets fine at T0, then three of them time out once 20 s later. */
    const threeOfEight = (windowMs: number): Run => {
      const run = new Run([upstreamError, upstreamDown({}, 0.5, windowMs)]);
      for (const target of many) run.observe(ok(target, T0), T0);
      for (const target of many.slice(0, 3)) run.observe(fail(target, T0 + 20_000), T0 + 20_000);
      return run;
    };
    // the shipped window (60 s) judges all eight: 3 of 8 is not most
    expect(threeOfEight(60_000).transitions).toEqual([]);
    // a window shorter than the targets' period judges only the failing ones: 3 of 3
    expect(threeOfEight(5_000).transitions.map((t) => t.rule)).toEqual(["upstream_down"]);
  });

  it("judges the configured targets not polled yet, so a few first answers failing at startup are not 'most'", () => {
    const many = ["A", "B", "C", "D", "E", "F", "G", "H"].map((p) => offchain(`${p}/USD`));
    const rules = [upstreamError, upstreamDown({}, 0.5, 60_000)];
    const startup = new Run(rules);
    retainTargets(startup.state, new Set(many.map((t) => t.id)), rules, T0, many);
    // a loaded machine at startup: the first three polls time out before any other target answered
    for (const target of many.slice(0, 3)) startup.observe(fail(target, T0 + 100), T0 + 100);
    expect(startup.transitions).toEqual([]);
    // the upstream really is down: once half of the configured targets fail, it fires
    for (const target of many.slice(3)) startup.observe(fail(target, T0 + 500), T0 + 500);
    expect(startup.transitions.filter((t) => t.rule === "upstream_down").map((t) => t.summary)).toEqual([
      "Pragma API failing (HTTP 500): 4 of 8 targets failing since 10:00:00",
    ]);
  });

  it("holds while any target still fails (clearThreshold 1) and resolves with the last recovery", () => {
    const run = outage([upstreamError, upstreamDown()], 3);
    const before = run.transitions.length;
    const steps = TARGETS.map((target, i) =>
      describeAll(run.observe(ok(target, T0 + 10_000 + i), T0 + 10_000 + i), run.transitions),
    );
    expect(steps).toEqual([
      ["upstream_error(BTC/USD):resolved<-upstream_down"],
      ["upstream_error(ETH/USD):resolved<-upstream_down"],
      ["upstream_error(SOL/USD):resolved<-upstream_down"],
      ["upstream_down:resolved", "upstream_error(STRK/USD):resolved<-upstream_down"],
    ]);
    expect(run.transitions.length).toBe(before + 5);
    expect(run.transitions.at(-2)?.summary).toBe("Pragma API answers again: no target failing");
  });

  it("announces a child that outlives its parent on its own, without causedBy", () => {
    const held = rule("upstream_error", {}, { threshold: 3, minFiringMs: 20_000 });
    const run = outage([held, upstreamDown()], 3);
    const recovered = TARGETS.flatMap((target) => run.observe(ok(target, T0 + 10_000), T0 + 10_000));
    expect(describeAll(recovered, run.transitions)).toEqual([
      "upstream_down:resolved",
      ...PAIRS.map((pair) => `upstream_error(${pair}):repeat`),
    ]);
    // the hold-down over, they resolve on their own
    expect(describeAll(run.tick(T0 + 23_000), run.transitions)).toEqual(
      PAIRS.map((pair) => `upstream_error(${pair}):resolved`),
    );
  });

  it("adopts children that fired before it, announcing them again with causedBy", () => {
    const run = new Run([upstreamError, upstreamDown({ forMs: 2_500 })]);
    for (const target of TARGETS) run.observe(ok(target, T0), T0);
    for (let i = 1; i <= 4; i++)
      for (const target of TARGETS) run.observe(fail(target, T0 + i * 1_000), T0 + i * 1_000);
    expect(describeAll(run.transitions, run.transitions)).toEqual([
      ...PAIRS.map((pair) => `upstream_error(${pair}):first`),
      "upstream_down:first",
      ...PAIRS.map((pair) => `upstream_error(${pair}):repeat<-upstream_down`),
    ]);
  });

  it("survives a restart: the parent is not announced again, its children stay linked", () => {
    const run = outage([upstreamError, upstreamDown()], 3);
    const checkpoint = parsePersistedAlertState(JSON.parse(JSON.stringify(exportAlertState(run.state))));
    const restarted = new Run(run.rules);
    restarted.state = importAlertState(checkpoint);
    for (const target of TARGETS) restarted.observe(fail(target, T0 + 5_000), T0 + 5_000);
    expect(restarted.transitions).toEqual([]);
    const resolved = TARGETS.flatMap((target) => restarted.observe(ok(target, T0 + 6_000), T0 + 6_000));
    expect(describeAll(resolved, run.transitions)).toEqual([
      "upstream_error(BTC/USD):resolved<-upstream_down",
      "upstream_error(ETH/USD):resolved<-upstream_down",
      "upstream_error(SOL/USD):resolved<-upstream_down",
      "upstream_down:resolved",
      "upstream_error(STRK/USD):resolved<-upstream_down",
    ]);
  });

  it("restores causedBy from journaled transitions after the checkpoint", () => {
    const run = new Run([upstreamError, upstreamDown()]);
    const empty = parsePersistedAlertState(JSON.parse(JSON.stringify(exportAlertState(run.state))));
    const live = outage([upstreamError, upstreamDown()], 3);
    const restored = restoreAnnounced(importAlertState(empty), live.transitions);
    const child = [...exportAlertState(restored).alerts].find((a) => a.rule === "upstream_error");
    expect(child?.causedBy).toBe(live.transitions[0]?.fingerprint);
  });
});

describe("publisher_outage", () => {
  const stale = rule("publisher_stale", { perFeed: true }, { threshold: 60_000 });
  const outageRule = rule("publisher_outage", {}, { threshold: 3, clearThreshold: 1, severity: "critical" });
  const feeds = (pairs: readonly string[], atMs: number) => pairs.map((pair) => [pair, atMs] as const);

  it("names the publisher and its pairs once its feeds are stale on K pairs; the per-pair alerts are children", () => {
    const run = new Run([stale, outageRule]);
    const list = (atMs: number, aliceUpdatedMs: number) => [
      publisher("ALICE", T0 + 100_000, feeds(["BTC/USD", "ETH/USD", "SOL/USD"], aliceUpdatedMs)),
      publisher("BOB", atMs, feeds(["BTC/USD"], atMs)),
    ];
    run.observe(obs.pubs(list(T0, T0), T0), T0);
    const fired = run.observe(obs.pubs(list(T0 + 70_000, T0), T0 + 70_000), T0 + 70_000);
    expect(describeAll(fired, run.transitions)).toEqual([
      "publisher_outage:first",
      "publisher_stale(BTC/USD):first<-publisher_outage",
      "publisher_stale(ETH/USD):first<-publisher_outage",
      "publisher_stale(SOL/USD):first<-publisher_outage",
    ]);
    expect(fired[0]?.summary).toBe("publisher ALICE stale on 3 pairs: BTC/USD, ETH/USD, SOL/USD");
    expect(fired[0]?.labels).toEqual({ publisher: "ALICE" });
    // two stale pairs are no outage
    const two = new Run([stale, outageRule]);
    const pairs2 = [publisher("ALICE", T0 + 100_000, feeds(["BTC/USD", "ETH/USD"], T0))];
    two.observe(obs.pubs(pairs2, T0 + 70_000), T0 + 70_000);
    expect(two.transitions.every((t) => t.rule === "publisher_stale" && t.causedBy === undefined)).toBe(true);
    // ALICE publishes again: children resolve under it, then it resolves
    const back = run.observe(obs.pubs(list(T0 + 80_000, T0 + 80_000), T0 + 80_000), T0 + 80_000);
    expect(describeAll(back, run.transitions)).toEqual([
      "publisher_outage:resolved",
      "publisher_stale(BTC/USD):resolved<-publisher_outage",
      "publisher_stale(ETH/USD):resolved<-publisher_outage",
      "publisher_stale(SOL/USD):resolved<-publisher_outage",
    ]);
  });
});

describe("source_deviation", () => {
  const deviation = rule("component_deviation", { market: "offchain" }, { threshold: 0.01, forMs: 5_000 });
  const sourceRule = rule("source_deviation", {}, { threshold: 3, clearThreshold: 1 });

  it("fires on pending children, so they fire under it and are never notified on their own", () => {
    const run = new Run([deviation, sourceRule]);
    const poll = (atMs: number, bad: string) =>
      TARGETS.slice(0, 3).flatMap((target) =>
        run.observe(
          ok(target, atMs, "100", [
            ["GOOD", "100"],
            ["BAD", bad],
          ]),
          atMs,
        ),
      );
    poll(T0, "100");
    expect(describeAll(poll(T0 + 1_000, "103"), run.transitions)).toEqual(["source_deviation:first"]);
    expect(run.transitions[0]?.summary).toBe(
      "source BAD (offchain) deviates from the aggregate on 3 pairs: BTC/USD +3.00%, ETH/USD +3.00%, SOL/USD +3.00%",
    );
    expect(run.transitions[0]?.labels).toEqual({ source: "BAD", market: "offchain" });
    const children = poll(T0 + 6_000, "103");
    expect(describeAll(children, run.transitions)).toEqual(
      ["BTC/USD", "ETH/USD", "SOL/USD"].map((pair) => `component_deviation(${pair}):first<-source_deviation`),
    );
    const calm = poll(T0 + 7_000, "100");
    expect(describeAll(calm, run.transitions)).toEqual([
      "component_deviation(BTC/USD):resolved<-source_deviation",
      "component_deviation(ETH/USD):resolved<-source_deviation",
      "source_deviation:resolved",
      "component_deviation(SOL/USD):resolved<-source_deviation",
    ]);
  });
});

describe("market_move", () => {
  const change = rule(
    "price_change",
    { windowMs: 10_000, market: "offchain" },
    { threshold: 0.02, clearThreshold: 0.015 },
  );
  const move = (threshold: number, minFraction: number) =>
    rule("market_move", { minFraction, windowMs: 60_000 }, { threshold, clearThreshold: 1 });

  /** Every pair at 100 each second to T0+10s, then `moved` pairs at `price` (one second apart). */
  function market(rules: readonly RuleConfig[], moved: number, prices: readonly string[]): Run {
    const run = new Run(rules);
    for (let s = 0; s <= 10; s++)
      for (const target of TARGETS) run.observe(ok(target, T0 + s * 1_000), T0 + s * 1_000);
    TARGETS.slice(0, moved).forEach((target, i) =>
      run.observe(ok(target, T0 + 11_000 + i * 100, prices[i] ?? "94"), T0 + 11_000 + i * 100),
    );
    return run;
  }

  it("one alert lists the pairs sorted by move once N pairs moved the same way; earlier pairs are adopted", () => {
    const run = market([change, move(3, 0.5)], 3, ["95", "92", "94"]);
    expect(describeAll(run.transitions, run.transitions)).toEqual([
      "price_change(BTC/USD):first",
      "price_change(ETH/USD):first",
      "market_move:first",
      "price_change(SOL/USD):first<-market_move",
      "price_change(BTC/USD):repeat<-market_move",
      "price_change(ETH/USD):repeat<-market_move",
    ]);
    const parent = run.transitions[2]!;
    expect(parent.labels).toEqual({ direction: "down" });
    expect(parent.summary).toBe(
      "market move down: 3 of 4 pairs moved past their price_change thresholds within 1min: ETH/USD -8.00%, SOL/USD -6.00%, BTC/USD -5.00%",
    );
  });

  it("needs the fraction of the pairs too, and moves in one direction only", () => {
    expect(market([change, move(2, 0.75)], 2, ["94", "94"]).transitions.map((t) => t.rule)).toEqual([
      "price_change",
      "price_change",
    ]);
    const mixed = market([change, move(3, 0)], 3, ["94", "106", "94"]);
    expect(mixed.transitions.map((t) => t.rule)).toEqual(["price_change", "price_change", "price_change"]);
  });

  it("resolves once no pair holds its move; children resolving under it carry causedBy", () => {
    const run = market([change, move(3, 0.5)], 4, ["94", "94", "94", "94"]);
    // the moved prices stay: after the window the moves are out of it
    const later: AlertPayload[] = [];
    for (const target of TARGETS) later.push(...run.observe(ok(target, T0 + 22_000, "94"), T0 + 22_000));
    expect(describeAll(later, run.transitions)).toEqual([
      "price_change(BTC/USD):resolved<-market_move",
      "price_change(ETH/USD):resolved<-market_move",
      "price_change(SOL/USD):resolved<-market_move",
      "market_move:resolved",
      "price_change(STRK/USD):resolved<-market_move",
    ]);
  });
});
