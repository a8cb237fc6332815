// The cause rules in a cluster, pure: a member judging them over its own engine and the other members' summaries
// judges like one daemon holding every target (property), and a member that does not judge them links its own
// children to the parents firing in the cluster's log.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  causeConfigHash,
  mergePeerCauses,
  summaryVerdictText,
  type CauseSummary,
  type ClusterCauses,
  type PeerCauses,
} from "../../src/domain/cause-summary.js";
import type { AlertPayload } from "../../src/domain/events.js";
import { fingerprintOf } from "../../src/domain/fingerprint.js";
import {
  causeSummary,
  createMonitorState,
  observe,
  retainTargets,
  setClusterCauses,
  tick,
  type MonitorState,
  type Observation,
} from "../../src/domain/monitor.js";
import { definitionOf, ruleLabels, type RuleConfig } from "../../src/domain/rules/index.js";
import type { TargetSpec } from "../../src/domain/types.js";
import { BTC_OFF, T0, http500, obs, pairPrice, refused, rule } from "./helpers.js";

type Offchain = Extract<TargetSpec, { kind: "offchain" }>;
const offchain = (pair: string): Offchain => ({ ...BTC_OFF, id: `offchain:${pair}`, pair });

/** One poll's outcome: a price, or an error. */
type Outcome = "100" | "94" | "106" | "500" | "refused";

function observation(target: Offchain, outcome: Outcome, atMs: number): Observation {
  if (outcome === "500" || outcome === "refused")
    return {
      kind: "offchain",
      target,
      result: { ok: false, error: outcome === "500" ? http500 : refused },
      observedAtMs: atMs,
    };
  return obs.off(pairPrice(outcome, atMs), atMs, target);
}

const upstreamError = rule("upstream_error", {}, { threshold: 2 });
const priceChange = rule(
  "price_change",
  { windowMs: 10_000, market: "offchain" },
  { threshold: 0.02, clearThreshold: 0.015 },
);
const upstreamDown = (threshold: number, minFraction: number) =>
  rule("upstream_down", { minFraction, windowMs: 5_000 }, { threshold, clearThreshold: 1 });
const marketMove = (threshold: number, minFraction: number) =>
  rule("market_move", { minFraction, windowMs: 60_000 }, { threshold, clearThreshold: 1 });

/** One daemon: no peers. */
const peers0 = mergePeerCauses([]);

/** What a cause rule says, order aside: each finding's labels, value, verdict and text. */
function verdicts(state: MonitorState, cause: RuleConfig, peers: PeerCauses, nowMs: number): string[] {
  const definition = definitionOf(cause).cause;
  if (definition === null) throw new Error(`${cause.kind} is no cause rule`);
  const findings = definition.evaluate({
    rule: cause,
    alerts: state.engine.alerts,
    targets: state.targets.byId,
    pricePairs: state.targets.pricePairs,
    peers,
    parents: [],
    nowMs,
  });
  return findings
    .map(({ measure }) => {
      const { summary, context } = measure.describe();
      return JSON.stringify([
        measure.extraLabels,
        measure.value,
        measure.fires,
        measure.clears,
        summary,
        context,
      ]);
    })
    .sort();
}

/** Feed `script` (per pair, one outcome a second after ten healthy seconds) to a state holding only `mine`. */
function feed(
  rules: readonly RuleConfig[],
  pairs: readonly string[],
  script: readonly (readonly Outcome[])[],
  mine: (index: number) => boolean,
): MonitorState {
  const targets = pairs.map(offchain);
  // as the runner starts: the configured targets this state holds are registered before their first poll
  const held = targets.filter((_, i) => mine(i));
  let state = retainTargets(createMonitorState(), new Set(held.map((t) => t.id)), rules, T0, held).state;
  const steps = 10 + (script[0]?.length ?? 0);
  for (let s = 0; s <= steps; s++)
    targets.forEach((target, i) => {
      if (!mine(i)) return;
      const outcome = s <= 10 ? "100" : (script[i]?.[s - 11] ?? "100");
      state = observe(state, observation(target, outcome, T0 + s * 1_000), rules, T0 + s * 1_000).state;
    });
  return state;
}

describe("cause rules over the cluster's summaries", () => {
  it("a member judging with the others' summaries judges like one daemon holding every target, held twice or not (property)", () => {
    const outcome = fc.constantFrom<Outcome>("100", "94", "106", "500", "refused");
    const world = fc
      .record({
        pairCount: fc.integer({ min: 2, max: 9 }),
        members: fc.integer({ min: 1, max: 4 }),
        steps: fc.integer({ min: 1, max: 3 }),
        threshold: fc.integer({ min: 1, max: 6 }),
        minFraction: fc.constantFrom(0, 0.5, 0.8),
        laterMs: fc.constantFrom(0, 2_000, 30_000),
      })
      .chain((w) =>
        fc.record({
          w: fc.constant(w),
          owners: fc.array(fc.integer({ min: 0, max: w.members - 1 }), {
            minLength: w.pairCount,
            maxLength: w.pairCount,
          }),
          // a second holder of the pair (moving between members: both summarise it), or none
          also: fc.array(fc.integer({ min: -1, max: w.members - 1 }), {
            minLength: w.pairCount,
            maxLength: w.pairCount,
          }),
          script: fc.array(fc.array(outcome, { minLength: w.steps, maxLength: w.steps }), {
            minLength: w.pairCount,
            maxLength: w.pairCount,
          }),
        }),
      );
    fc.assert(
      fc.property(world, ({ w, owners, also, script }) => {
        const pairs = Array.from({ length: w.pairCount }, (_, i) => `P${i}/USD`);
        const causes = [upstreamDown(w.threshold, w.minFraction), marketMove(w.threshold, w.minFraction)];
        const rules = [upstreamError, priceChange, ...causes];
        const nowMs = T0 + (10 + w.steps) * 1_000 + w.laterMs;
        const single = feed(rules, pairs, script, () => true);
        const members = Array.from({ length: w.members }, (_, m) =>
          feed(rules, pairs, script, (i) => owners[i] === m || also[i] === m),
        );
        const summaries = members.map((state) => causeSummary(state, nowMs));
        // the summary is what travels through NATS: JSON
        const travelled = summaries.map((s) => JSON.parse(JSON.stringify(s)) as CauseSummary);
        members.forEach((owner, m) => {
          const peers = mergePeerCauses(travelled.filter((_, k) => k !== m));
          for (const cause of causes)
            expect(verdicts(owner, cause, peers, nowMs)).toEqual(verdicts(single, cause, peers0, nowMs));
        });
      }),
      { numRuns: 150 },
    );
  });

  it("counts the cluster in the summary and the fraction: 4 of 4 where the owner holds 2", () => {
    const pairs = ["A/USD", "B/USD", "C/USD", "D/USD"];
    const script: Outcome[][] = pairs.map(() => ["500", "500"]);
    const rules = [upstreamError, upstreamDown(3, 0.8)];
    const owner = feed(rules, pairs, script, (i) => i < 2);
    const other = feed(rules, pairs, script, (i) => i >= 2);
    const nowMs = T0 + 12_000;
    const alone = tick(owner, rules, nowMs).transitions.filter((t) => t.rule === "upstream_down");
    expect(alone).toEqual([]); // 2 failing: below the count of 3
    const peers = mergePeerCauses([causeSummary(other, nowMs)!]);
    setClusterCauses(owner, { judges: true, ready: true, peers, firing: new Set() });
    const [parent] = tick(owner, rules, nowMs + 1_000).transitions.filter((t) => t.rule === "upstream_down");
    expect(parent?.summary).toBe("Pragma API failing (HTTP 500): 4 of 4 targets failing since 10:00:11");
    expect(parent?.context["targets"]).toBe("offchain:A/USD, offchain:B/USD, offchain:C/USD, offchain:D/USD");
  });

  it("a new cause owner steps no parent until its peers are ready, then judges adopted targets by the peers' word", () => {
    const pairs = ["A/USD", "B/USD", "C/USD", "D/USD"];
    const rules = [upstreamError, upstreamDown(3, 0)];
    const all = feed(
      rules,
      pairs,
      pairs.map(() => ["500", "500"]),
      () => true,
    );
    const nowMs = T0 + 12_000;
    const parent = fingerprintOf("upstream_down", ruleLabels(upstreamDown(3, 0)));
    expect(all.engine.alerts.get(parent)?.status).toBe("firing");
    const firing = new Set([parent]);
    // the new owner of the cause key adopted the parent and the targets (it has polled none yet); peers unknown
    const owner: MonitorState = { ...feed(rules, pairs, [], () => false), engine: all.engine };
    const upstreamDowns = (transitions: readonly AlertPayload[]): string[] =>
      transitions.filter((t) => t.rule === "upstream_down").map((t) => t.reason);
    setClusterCauses(owner, { judges: true, ready: false, peers: peers0, firing });
    const mine = pairs.map(offchain);
    const held = new Set(mine.map((t) => t.id));
    expect(upstreamDowns(retainTargets(owner, held, rules, nowMs, mine).transitions)).toEqual([]);
    expect(upstreamDowns(tick(owner, rules, nowMs + 1_000).transitions)).toEqual([]);
    // ready: the old holder's summary names all four failing (this engine has not polled them yet)
    const peers = mergePeerCauses([causeSummary(all, nowMs)!]);
    setClusterCauses(owner, { judges: true, ready: true, peers, firing });
    expect(upstreamDowns(tick(owner, rules, nowMs + 2_000).transitions)).toEqual([]);
    expect(owner.engine.alerts.get(parent)?.status).toBe("firing");
  });

  it("a member that does not judge steps no parent and links its children to the parents firing in the log", () => {
    const pairs = ["A/USD", "B/USD"];
    const rules = [upstreamError, upstreamDown(2, 0)];
    const parent = fingerprintOf("upstream_down", ruleLabels(upstreamDown(2, 0)));
    const run = (firing: ReadonlySet<string>): AlertPayload[] => {
      let state = feed(rules, pairs, [[], []], () => true);
      const cluster: ClusterCauses = { judges: false, ready: true, peers: mergePeerCauses([]), firing };
      setClusterCauses(state, cluster);
      const out: AlertPayload[] = [];
      for (let s = 1; s <= 3; s++)
        pairs.map(offchain).forEach((target) => {
          const atMs = T0 + (10 + s) * 1_000;
          const step = observe(state, observation(target, "500", atMs), rules, atMs);
          state = step.state;
          out.push(...step.transitions);
        });
      return out;
    };
    const linked = run(new Set([parent]));
    expect(linked.map((t) => `${t.rule}:${t.reason}:${t.causedBy ?? "-"}`)).toEqual([
      `upstream_error:first:${parent}`,
      `upstream_error:first:${parent}`,
    ]);
    const alone = run(new Set());
    expect(alone.map((t) => `${t.rule}:${t.reason}:${t.causedBy ?? "-"}`)).toEqual([
      "upstream_error:first:-",
      "upstream_error:first:-",
    ]);
  });

  it("merges the peers' summaries: a target's word is the first summary's that polled it, pairs united", () => {
    const a: CauseSummary = {
      failing: [{ id: "t1", kind: "HTTP 500", network: false, sinceMs: 1 }],
      held: ["t1", "t3", "t4"],
      unpolled: ["t4"],
      unjudged: { upstream_down: ["t3"] },
      pairs: ["A/USD"],
      children: [],
    };
    const b: CauseSummary = {
      failing: [
        { id: "t1", kind: "HTTP 502", network: false, sinceMs: 5 },
        { id: "t2", kind: "HTTP 500", network: false, sinceMs: 3 },
        { id: "t4", kind: "HTTP 500", network: false, sinceMs: 3 },
      ],
      held: ["t1", "t2", "t3", "t4"],
      unpolled: [],
      unjudged: { upstream_down: [] },
      pairs: ["A/USD", "B/USD"],
      children: [],
    };
    const merged = mergePeerCauses([a, b]);
    expect(merged.failing.map((t) => `${t.id}:${t.kind}`)).toEqual([
      "t1:HTTP 500",
      "t2:HTTP 500",
      "t4:HTTP 500",
    ]);
    expect([...merged.held].sort()).toEqual(["t1", "t2", "t3", "t4"]);
    expect([...(merged.unjudged.get("upstream_down") ?? [])]).toEqual(["t3"]);
    expect([...merged.pairs]).toEqual(["A/USD", "B/USD"]);
  });

  it("a member that does not judge runs its cause pass on its children's transitions, else at the tick", () => {
    const pairs = ["A/USD", "B/USD", "C/USD"];
    const rules = [upstreamError, upstreamDown(2, 0)];
    const parent = fingerprintOf("upstream_down", ruleLabels(upstreamDown(2, 0)));
    const state = feed(rules, pairs, [[], [], []], () => true);
    const cluster = (firing: ReadonlySet<string>): ClusterCauses => ({
      judges: false,
      ready: true,
      peers: peers0,
      firing,
    });
    setClusterCauses(state, cluster(new Set()));
    const [a, b, c] = pairs.map(offchain) as [Offchain, Offchain, Offchain];
    const at = (s: number): number => T0 + (10 + s) * 1_000;
    const named = (transitions: readonly AlertPayload[]): string[] =>
      transitions.map((t) => `${t.rule}:${t.reason}:${t.causedBy ?? "-"}`);
    const step = (target: Offchain, outcome: Outcome, s: number): string[] =>
      named(observe(state, observation(target, outcome, at(s)), rules, at(s)).transitions);
    // the children fire on their own (no parent in the log yet)
    const fired = [1, 2].flatMap((s) => [a, b, c].flatMap((target) => step(target, "500", s)));
    expect(fired).toEqual(Array(3).fill("upstream_error:first:-"));
    // the parent fires in the log: a's next failure, or c's of another kind, moves none of its children: no pass
    setClusterCauses(state, cluster(new Set([parent])));
    expect(step(a, "500", 3)).toEqual([]);
    expect(step(c, "refused", 3)).toEqual([]);
    // the tick's pass links the HTTP 500 group (a and b)
    expect(named(tick(state, rules, at(3)).transitions)).toEqual(
      Array(2).fill(`upstream_error:repeat:${parent}`),
    );
    // a child firing while the parent fires in the log is linked in its own step
    expect(step(c, "100", 4)).toEqual(["upstream_error:resolved:-"]);
    const again = [5, 6].flatMap((s) => step(c, "500", s));
    expect(again).toEqual([`upstream_error:first:${parent}`]);
  });
});

describe("the cause configuration hash and the verdict text of a summary", () => {
  const stale = rule("stale_price", { market: "offchain" }, { threshold: 30_000 });
  const hashOf = (rules: readonly RuleConfig[]): string =>
    causeConfigHash(
      rules.filter((r) => r.enabled && definitionOf(r).cause !== null),
      rules,
    );

  it("changes with a cause rule's setting and with a child rule's, not with key order or another rule", () => {
    const base = [upstreamError, priceChange, stale, upstreamDown(3, 0.5), marketMove(3, 0.5)];
    const hash = hashOf(base);
    expect(hash).toMatch(/^[0-9a-f]{16}$/);
    const reordered = base.map(
      (r) => Object.fromEntries(Object.entries(r).reverse()) as unknown as RuleConfig,
    );
    expect(hashOf(reordered)).toBe(hash);
    // a rule whose alerts no cause rule reads (stale_price, and upstream_error: upstream_down reads the polls)
    expect(
      hashOf([
        upstreamError,
        priceChange,
        rule("stale_price", { market: "offchain" }, { threshold: 60_000 }),
        upstreamDown(3, 0.5),
        marketMove(3, 0.5),
      ]),
    ).toBe(hash);
    expect(
      hashOf([
        rule("upstream_error", {}, { threshold: 5 }),
        priceChange,
        stale,
        upstreamDown(3, 0.5),
        marketMove(3, 0.5),
      ]),
    ).toBe(hash);
    // a cause rule's threshold, a child rule's (price_change is market_move's), a cause rule disabled
    expect(hashOf([upstreamError, priceChange, stale, upstreamDown(4, 0.5), marketMove(3, 0.5)])).not.toBe(
      hash,
    );
    const wider = rule(
      "price_change",
      { windowMs: 10_000, market: "offchain" },
      { threshold: 0.03, clearThreshold: 0.015 },
    );
    expect(hashOf([upstreamError, wider, stale, upstreamDown(3, 0.5), marketMove(3, 0.5)])).not.toBe(hash);
    expect(
      hashOf([
        upstreamError,
        priceChange,
        stale,
        upstreamDown(3, 0.5),
        { ...marketMove(3, 0.5), enabled: false },
      ]),
    ).not.toBe(hash);
  });

  it("reads a child's value as its sign: a larger move alike, the other direction not", () => {
    const child = (value: number | null): CauseSummary => ({
      failing: [],
      held: [],
      unpolled: [],
      unjudged: {},
      pairs: ["A/USD"],
      children: [
        {
          fingerprint: "f",
          rule: "price_change",
          labels: { pair: "A/USD" },
          status: "firing",
          active: true,
          value,
          pendingSinceMs: 1,
        },
      ],
    });
    expect(summaryVerdictText(child(0.05))).toBe(summaryVerdictText(child(0.08)));
    expect(summaryVerdictText(child(0.05))).not.toBe(summaryVerdictText(child(-0.05)));
    expect(summaryVerdictText(child(0.05))).not.toBe(summaryVerdictText(child(0)));
    expect(summaryVerdictText(child(null))).not.toBe(summaryVerdictText(child(0)));
  });
});
