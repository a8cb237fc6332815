// Per-target rule slots (settings after overrides, scope, alert keys) are cached per rules array and target spec:
// a new rules array or a new spec rebuilds them, and overrides always apply to the right key. A key its records share
// is frozen; the slots a tick and a failed poll run are those their definitions name.
import { describe, expect, it } from "vitest";
import { createEvaluator } from "../../src/domain/evaluator.js";
import type { AlertPayload } from "../../src/domain/events.js";
import {
  createMonitorState,
  observe,
  restoreAnnounced,
  retainTargets,
  tick,
  type MonitorState,
} from "../../src/domain/monitor.js";
import {
  definitionOf,
  RULE_CONFIG_KINDS,
  RULES,
  type RuleConfig,
  type RuleConfigKind,
} from "../../src/domain/rules/index.js";
import type { TargetSpec } from "../../src/domain/types.js";
import {
  BTC_OFF,
  BTC_ON,
  ETH_OFF,
  FUND,
  PUBS,
  T0,
  VAULT,
  entrySet,
  obs,
  pairPrice,
  rule,
} from "./helpers.js";

const low = (common: Parameters<typeof rule<"low_sources">>[2]): RuleConfig =>
  rule("low_sources", { market: "offchain" }, common);

function step(
  state: MonitorState,
  rules: readonly RuleConfig[],
  at: number,
  numSources: number,
  target = BTC_OFF,
): readonly AlertPayload[] {
  return observe(state, obs.off(pairPrice("100", at, [], numSources), at, target), rules, at).transitions;
}

describe("rule slots", () => {
  it("a new rules array rebuilds the settings: a raised threshold fires, a lowered one resolves", () => {
    const state = createMonitorState();
    const base = [low({ threshold: 2 })];
    expect(step(state, base, T0, 3)).toEqual([]);
    expect(step(state, base, T0 + 1000, 3)).toEqual([]);
    // same rule id and kind, new array and new config object
    const raised = [low({ threshold: 3 })];
    const fired = step(state, raised, T0 + 2000, 3);
    expect(fired.map((t) => [t.rule, t.status, t.threshold])).toEqual([["low_sources", "firing", 3]]);
    // back to the old array: the cached slots of that array are not reused stale
    const resolved = step(state, base, T0 + 3000, 3);
    expect(resolved.map((t) => [t.fingerprint, t.status])).toEqual([[fired[0]?.fingerprint, "resolved"]]);
  });

  it("an override added in a new rules array applies to its pair only", () => {
    const state = createMonitorState();
    const plain = [low({ threshold: 2 })];
    expect(step(state, plain, T0, 4, BTC_OFF)).toEqual([]);
    expect(step(state, plain, T0, 4, ETH_OFF)).toEqual([]);
    const overridden = [
      low({ threshold: 2, overrides: { "BTC/USD": { threshold: 4, severity: "critical" } } }),
    ];
    const btc = step(state, overridden, T0 + 1000, 4, BTC_OFF);
    expect(btc.map((t) => [t.labels["pair"], t.severity, t.threshold])).toEqual([["BTC/USD", "critical", 4]]);
    expect(step(state, overridden, T0 + 1000, 4, ETH_OFF)).toEqual([]);
  });

  it("a rule id change gives new alert keys (rule_id label), and the old alert resolves on the tick", () => {
    const state = createMonitorState();
    const first = [low({ threshold: 5 })];
    const fired = step(state, first, T0, 3);
    expect(fired.map((t) => t.labels["rule_id"])).toEqual([undefined]);
    const renamed = [low({ threshold: 5, id: "few_sources" })];
    const again = step(state, renamed, T0 + 1000, 3);
    expect(again.map((t) => [t.labels["rule_id"], t.status])).toEqual([["few_sources", "firing"]]);
    expect(again[0]?.fingerprint).not.toBe(fired[0]?.fingerprint);
    const swept = tick(state, renamed, T0 + 1500).transitions;
    expect(swept.map((t) => [t.fingerprint, t.status])).toEqual([[fired[0]?.fingerprint, "resolved"]]);
  });

  it("a pairs filter in a new rules array drops the target from the rule", () => {
    const state = createMonitorState();
    const all = [low({ threshold: 5 })];
    expect(step(state, all, T0, 3).map((t) => t.status)).toEqual(["firing"]);
    const ethOnly = [low({ threshold: 5, pairs: ["ETH/USD"] })];
    expect(step(state, ethOnly, T0 + 1000, 3)).toEqual([]);
    expect(tick(state, ethOnly, T0 + 1500).transitions.map((t) => t.status)).toEqual(["resolved"]);
    expect(step(state, ethOnly, T0 + 2000, 3, ETH_OFF).map((t) => t.labels["pair"])).toEqual(["ETH/USD"]);
  });

  it("a new spec object with the same id and content keeps working (slots rebuilt for it)", () => {
    const state = createMonitorState();
    const rules = [low({ threshold: 3, overrides: { "BTC/USD": { threshold: 2 } } })];
    expect(step(state, rules, T0, 3, BTC_OFF)).toEqual([]);
    const copy = { ...BTC_OFF };
    expect(step(state, rules, T0 + 1000, 2, copy).map((t) => t.threshold)).toEqual([2]);
  });
});

describe("alert record cells", () => {
  // Two targets of one pair and entry type share labels, hence fingerprints: a calm measure of one
  // must still reach the record the other created (it is not "quiet"), however often it is re-created.
  it("a record created through another target's key is seen by every key with that fingerprint", () => {
    const state = createMonitorState();
    const rules = [low({ threshold: 3 })];
    const twap = { ...BTC_OFF, id: "offchain:BTC/USD:twap", aggregation: "twap" as const };
    const statuses = (t: readonly AlertPayload[]): string[] => t.map((x) => x.status);
    expect(statuses(step(state, rules, T0, 2, BTC_OFF))).toEqual(["firing"]);
    expect(statuses(step(state, rules, T0 + 100, 5, twap))).toEqual(["resolved"]);
    for (let i = 1; i <= 3; i++) {
      const at = T0 + i * 1000;
      expect(tick(state, rules, at).transitions).toEqual([]);
      expect(statuses(step(state, rules, at + 10, 2, BTC_OFF))).toEqual(["firing"]);
      expect(statuses(step(state, rules, at + 20, 5, twap))).toEqual(["resolved"]);
    }
  });

  // A resolved record stays (inactive) for the flap window; calm measures of its key then take the quiet
  // path. Firing again, flap damping and the final resolve must work as with every measure reported.
  it("a resolved record kept for flap damping: calm polls change nothing, the next breach fires and damps", () => {
    const state = createMonitorState();
    const rules = [low({ threshold: 3, flapMaxTransitions: 3, flapWindowMs: 60_000 })];
    const statuses = (t: readonly AlertPayload[]): string[] => t.map((x) => x.status);
    expect(statuses(step(state, rules, T0, 2))).toEqual(["firing"]);
    expect(statuses(step(state, rules, T0 + 1000, 5))).toEqual(["resolved"]);
    for (let at = T0 + 2000; at <= T0 + 9000; at += 1000) {
      expect(step(state, rules, at, 5)).toEqual([]);
      expect(tick(state, rules, at + 500).transitions).toEqual([]);
    }
    const again = step(state, rules, T0 + 10_000, 2);
    expect(again.map((t) => [t.status, t.value])).toEqual([["firing", 2]]);
    // fourth flip within the window: held firing as flapping, no resolve
    expect(step(state, rules, T0 + 11_000, 5)).toEqual([]);
    // resolves once the condition has stayed clear for the flap window, while calm polls go on
    let resolvedAt = Number.NaN;
    for (let at = T0 + 12_000; at <= T0 + 90_000 && Number.isNaN(resolvedAt); at += 1000) {
      if (statuses(step(state, rules, at, 5)).includes("resolved")) resolvedAt = at;
    }
    // clear since the last flip at T0 + 11 s: 60 s later, not when the first flips leave the window
    expect(resolvedAt).toBe(T0 + 71_000);
  });

  // A slot builds its target's key once: every record and payload of that key holds the same labels object
  // and targets array, so none of them may change it under the others.
  it("the labels and targets a key's records and payloads share are frozen", () => {
    const state = createMonitorState();
    const rules = [low({ threshold: 3 })];
    const [fired] = step(state, rules, T0, 2);
    const record = state.engine.alerts.get(fired?.fingerprint ?? "");
    if (fired === undefined || record === undefined) throw new Error("no alert fired");
    expect(fired.labels).toBe(record.labels);
    const labels = record.labels as Record<string, string>;
    expect(() => {
      labels["pair"] = "ETH/USD";
    }).toThrow(TypeError);
    expect(() => (record.targetIds as string[]).push(ETH_OFF.id)).toThrow(TypeError);
    // the next alert of the key still names BTC/USD and its one target
    step(state, rules, T0 + 1000, 5);
    const [again] = step(state, rules, T0 + 2000, 2);
    expect(again?.labels["pair"]).toBe("BTC/USD");
    expect(state.engine.alerts.get(again?.fingerprint ?? "")?.targetIds).toEqual([BTC_OFF.id]);
  });

  it("records restored into a live state are seen by cached keys", () => {
    const state = createMonitorState();
    const rules = [low({ threshold: 3 })];
    const fired = step(state, rules, T0, 2);
    expect(fired.map((t) => t.status)).toEqual(["firing"]);
    expect(step(state, rules, T0 + 1000, 5).map((t) => t.status)).toEqual(["resolved"]);
    expect(tick(state, rules, T0 + 1500).transitions).toEqual([]);
    // the key is cached and has no record; a journal replay brings the firing alert back
    restoreAnnounced(state, fired);
    expect(step(state, rules, T0 + 2000, 5).map((t) => t.status)).toEqual(["resolved"]);
  });
});

describe("cross-market links", () => {
  const rules = [rule("onchain_offchain_deviation", { maxAgeMs: 120_000 }, { threshold: 0.01 })];
  const deviation = (t: readonly AlertPayload[]): string[] =>
    t.filter((x) => x.rule === "onchain_offchain_deviation").map((x) => x.status);
  const off = (state: MonitorState, price: string, at: number, target = BTC_OFF): readonly AlertPayload[] =>
    observe(state, obs.off(pairPrice(price, at), at, target), rules, at).transitions;
  const twinSpot = { ...BTC_OFF, id: "offchain:BTC/USD:twap", aggregation: "twap" as const };

  it("an off-chain spot poll re-evaluates its pair's on-chain target; a second spot target takes over when the first leaves", () => {
    const state = createMonitorState();
    expect(off(state, "100", T0)).toEqual([]);
    expect(deviation(observe(state, obs.on(entrySet("100", T0), T0), rules, T0).transitions)).toEqual([]);
    // the off-chain move alone fires the on-chain target's alert
    expect(deviation(off(state, "103", T0 + 1000))).toEqual(["firing"]);
    // another spot target of the pair does not represent it while the first is there
    expect(deviation(off(state, "100", T0 + 1500, twinSpot))).toEqual([]);
    // the first leaves, resolving the alert that compared against it; the twin now represents the pair
    const removed = retainTargets(state, new Set([BTC_ON.id, twinSpot.id]), rules, T0 + 1800);
    expect(deviation(removed.transitions)).toEqual(["resolved"]);
    expect(deviation(off(state, "103", T0 + 2000, twinSpot))).toEqual(["firing"]);
    expect(deviation(off(state, "100", T0 + 2200, twinSpot))).toEqual(["resolved"]);
    // and without an on-chain target, spot polls re-evaluate nothing
    expect(deviation(retainTargets(state, new Set([twinSpot.id]), rules, T0 + 2500).transitions)).toEqual([]);
    expect(off(state, "110", T0 + 3000, twinSpot)).toEqual([]);
  });
});

describe("the slots a tick and a failed poll run", () => {
  // one rule of every kind (the type makes the list complete), both markets for the kinds that have one
  const FIELDS: { readonly [K in RuleConfigKind]: object } = {
    price_change: { windowMs: 10_000, market: "offchain" },
    price_level: { direction: "above", market: "offchain" },
    variation: { window: "1h" },
    stale_price: { market: "offchain" },
    low_sources: { market: "offchain" },
    component_deviation: { market: "offchain" },
    onchain_offchain_deviation: { maxAgeMs: 60_000 },
    publisher_stale: { perFeed: false },
    publisher_missing: { publishers: ["ALICE"] },
    funding_rate: {},
    vault_status: {},
    vault_share_price: { windowMs: 10_000 },
    upstream_error: {},
    upstream_down: { minFraction: 0.5, windowMs: 10_000 },
    publisher_outage: {},
    source_deviation: {},
    market_move: { minFraction: 0.5, windowMs: 60_000 },
  };
  const rules: RuleConfig[] = RULE_CONFIG_KINDS.flatMap((kind) => {
    const fields = FIELDS[kind];
    const one = rule(kind, fields as never, { threshold: 1 });
    if (!("market" in fields)) return [one];
    return [
      one,
      rule(kind, { ...fields, market: "onchain" } as never, { threshold: 1, id: `${kind}_onchain` }),
    ];
  });
  // a target of every kind
  const SPECS: { readonly [K in TargetSpec["kind"]]: Extract<TargetSpec, { kind: K }> } = {
    offchain: BTC_OFF,
    onchain: BTC_ON,
    publishers: PUBS,
    funding: FUND,
    vault: VAULT,
  };

  it("are, on a target of every kind, the rules whose definitions say they run on ticks and on failed polls", () => {
    const evaluator = createEvaluator(rules);
    const ids = (slots: readonly { readonly rule: RuleConfig }[]): string[] => slots.map((s) => s.rule.id);
    const covered = new Set<string>();
    const [ticked, failed] = [new Set<string>(), new Set<string>()];
    for (const spec of Object.values(SPECS)) {
      const resolved = evaluator.rulesFor(spec);
      const applying = rules.filter((r) => definitionOf(r).appliesTo(r, spec)).map((r) => r.id);
      expect(ids(resolved.slots).sort()).toEqual(applying.sort());
      // in the slots' order, read off each rule kind's definition
      const says = (flag: "timeDriven" | "runsOnFailure"): string[] =>
        ids(resolved.slots.filter((s) => RULES[s.rule.kind][flag]));
      expect(ids(resolved.byTrigger.tick)).toEqual(says("timeDriven"));
      expect(ids(resolved.byTrigger.failed)).toEqual(says("runsOnFailure"));
      for (const slot of resolved.slots) covered.add(slot.rule.kind);
      for (const id of says("timeDriven")) ticked.add(id);
      for (const id of says("runsOnFailure")) failed.add(id);
    }
    // every kind that runs on targets (not the cause kinds) was resolved on one, and some run on each trigger
    expect([...covered].sort()).toEqual(RULE_CONFIG_KINDS.filter((k) => RULES[k].cause === null).sort());
    expect(ticked.size).toBeGreaterThan(0);
    expect(failed.size).toBeGreaterThan(0);
  });
});
