// A new owner brings a lagging alert checkpoint up to the cluster's log: a transition its owner published but had
// not checkpointed when it died is neither announced again nor resolved twice.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  alertStateByKey,
  keyOfLabelsFor,
  NO_ALERTS,
  reconcileWithJournal,
  type KeyOfLabels,
} from "../../src/domain/alert-handover.js";
import type { AlertLabels, RuleKind } from "../../src/domain/events.js";
import { isRuleConfigKind, RULE_CONFIG_KINDS, RULES } from "../../src/domain/rules/index.js";
import {
  AGGREGATIONS,
  ENTRY_TYPES,
  NETWORKS,
  PUBLISHER_TYPES,
  type TargetSpec,
} from "../../src/domain/types.js";
import { adoptAlertState, createMonitorState, exportAlertState, observe } from "../../src/domain/monitor.js";
import { BTC_OFF, BTC_ON, ETH_OFF, obs, pairPrice, PUBS, rule, T0, timeline } from "./helpers.js";

const rules = [rule("upstream_error", {}, { threshold: 2 })];
const BTC_KEY = "pair:BTC/USD";
const keyOf = (targetId: string): string | undefined =>
  targetId === BTC_OFF.id ? BTC_KEY : targetId === ETH_OFF.id ? "pair:ETH/USD" : undefined;

/** The old owner: upstream_error fires on BTC/USD at 1000; the transitions it published, and its alert state. */
function firedOnOldOwner() {
  const fired = timeline(rules, [
    [0, "fail"],
    [1000, "fail"],
  ]);
  expect(fired.log).toEqual(["upstream_error:first@1000"]);
  const checkpoint = alertStateByKey(exportAlertState(fired.state), keyOf).get(BTC_KEY);
  if (checkpoint === undefined) throw new Error("nothing checkpointed");
  return { published: fired.transitions, checkpoint, state: fired.state };
}

/** The new owner adopting `adopted`, then polling: still failing at 5000, recovered at 6000. */
function newOwnerLog(adopted: Parameters<typeof adoptAlertState>[1]): string[] {
  const owner = createMonitorState();
  adoptAlertState(owner, adopted);
  return timeline(
    rules,
    [
      [5000, "fail"],
      [6000, "fail"],
      [7000, 9],
    ],
    owner,
  ).log;
}

describe("a checkpoint reconciled with the journal (cluster handover)", () => {
  it("carries on a firing alert that was published but not checkpointed: no second first, one resolve", () => {
    const { published } = firedOnOldOwner();
    // the checkpoint was written before the transition (nothing firing), then the owner died
    const reconciled = reconcileWithJournal(NO_ALERTS, published, BTC_KEY, keyOf);
    expect(reconciled.alerts.map((a) => `${a.rule}:${a.status}`)).toEqual(["upstream_error:firing"]);
    expect(newOwnerLog(reconciled)).toEqual(["upstream_error:resolved@7000"]);
    // what the stale checkpoint alone does: the same alert announced a second time
    expect(newOwnerLog(NO_ALERTS)).toEqual(["upstream_error:first@6000", "upstream_error:resolved@7000"]);
  });

  it("drops a firing alert whose resolve was published but not checkpointed: no second resolve", () => {
    const { checkpoint, state } = firedOnOldOwner();
    const resolved = timeline(rules, [[2000, 9]], state);
    expect(resolved.log).toEqual(["upstream_error:resolved@2000"]);
    const reconciled = reconcileWithJournal(checkpoint, resolved.transitions, BTC_KEY, keyOf);
    expect(reconciled.alerts).toEqual([]);
    // the stale checkpoint alone: the new owner resolves it again once it sees the target healthy
    const owner = createMonitorState();
    adoptAlertState(owner, checkpoint);
    expect(timeline(rules, [[5000, 9]], owner).log).toEqual(["upstream_error:resolved@5000"]);
  });

  it("keeps the checkpoint as it is when the journal has nothing newer of the key's targets", () => {
    const { checkpoint, published } = firedOnOldOwner();
    expect(reconcileWithJournal(checkpoint, [], BTC_KEY, keyOf)).toEqual(checkpoint);
    // the same transitions again (already in the checkpoint: a checkpoint's seq lags what it holds)
    expect(reconcileWithJournal(checkpoint, published, BTC_KEY, keyOf).alerts).toHaveLength(1);
    // another key's transitions are not this key's
    expect(reconcileWithJournal(NO_ALERTS, published, "pair:ETH/USD", keyOf)).toEqual(NO_ALERTS);
  });
});

describe("an alert the log has of a rule whose restored record knows no target (price_change, ...)", () => {
  const priceChange = [rule("price_change", { windowMs: 5_000, market: "offchain" }, { threshold: 0.04 })];
  const keyOfLabels = keyOfLabelsFor([
    { spec: BTC_OFF, key: BTC_KEY },
    { spec: BTC_ON, key: BTC_KEY },
    { spec: ETH_OFF, key: "pair:ETH/USD" },
    { spec: PUBS, key: PUBS.id },
  ]);

  /** BTC/USD moves +20 % in 5 s on the old owner: the firing it published. */
  function moved() {
    const before = observe(createMonitorState(), obs.off(pairPrice("100", T0, [], 5), T0), priceChange, T0);
    const at = T0 + 5_000;
    const after = observe(before.state, obs.off(pairPrice("120", at, [], 5), at), priceChange, at);
    expect(after.transitions.map((a) => `${a.rule}:${a.reason}`)).toEqual(["price_change:first"]);
    return after.transitions;
  }

  it("is carried on by the key whose targets' labels it carries (the old owner died before its checkpoint)", () => {
    const reconciled = reconcileWithJournal(NO_ALERTS, moved(), BTC_KEY, keyOf, keyOfLabels);
    expect(reconciled.alerts.map((a) => `${a.rule}:${a.status}`)).toEqual(["price_change:firing"]);
    // and stays with that key in the new owner's own checkpoints until its next measurement names the target
    const owner = createMonitorState();
    adoptAlertState(owner, reconciled);
    expect(alertStateByKey(exportAlertState(owner), keyOf, keyOfLabels).get(BTC_KEY)?.alerts).toHaveLength(1);
    // without the labels' key it was lost: the new owner announced the move again as new
    expect(reconcileWithJournal(NO_ALERTS, moved(), BTC_KEY, keyOf).alerts).toEqual([]);
    expect(reconcileWithJournal(NO_ALERTS, moved(), "pair:ETH/USD", keyOf, keyOfLabels).alerts).toEqual([]);
  });

  it("reads a key from labels only when the targets they name agree on one", () => {
    const offchain = { pair: "BTC/USD", market: "offchain", entry_type: "spot", window: "5s" };
    expect(keyOfLabels("price_change", offchain)).toBe(BTC_KEY);
    const onchain = { pair: "BTC/USD", market: "onchain", network: BTC_ON.network };
    expect(keyOfLabels("price_change", onchain)).toBe(BTC_KEY);
    // a rule whose labels are its own (no market): read through that rule's labels of a target
    expect(keyOfLabels("onchain_offchain_deviation", { pair: "BTC/USD", network: BTC_ON.network })).toBe(
      BTC_KEY,
    );
    const publisher = { network: PUBS.network, entry_type: "spot", publisher: "P", pair: "BTC/USD" };
    expect(keyOfLabels("publisher_stale", publisher)).toBe(PUBS.id);
    expect(keyOfLabels("price_change", { ...offchain, pair: "SOL/USD" })).toBeUndefined();
    expect(keyOfLabels("sink_error", { sink: "hook" })).toBeUndefined();
    const clash = keyOfLabelsFor([
      { spec: BTC_OFF, key: "a" },
      { spec: { ...BTC_OFF, id: "offchain:BTC/USD:twap", aggregation: "twap" }, key: "b" },
    ]);
    expect(clash("price_change", offchain)).toBeUndefined();
  });
});

/** keyOfLabelsFor as it was before its index: every target's labels compared with the alert's, one by one. */
function linearKeyOfLabels(
  targets: readonly { readonly spec: TargetSpec; readonly key: string }[],
): KeyOfLabels {
  return (rule, labels) => {
    if (!isRuleConfigKind(rule)) return undefined;
    const { targetLabels } = RULES[rule];
    let found: string | undefined;
    for (const { spec, key } of targets) {
      if (!Object.entries(targetLabels(spec)).every(([name, value]) => labels[name] === value)) continue;
      if (found !== undefined && found !== key) return undefined;
      found = key;
    }
    return found;
  };
}

describe("keyOfLabelsFor's index (property)", () => {
  // small pools, so targets often share labels (and disagree on keys) and alerts often carry a target's labels
  const pair = fc.constantFrom("BTC/USD", "ETH/USD");
  const network = fc.constantFrom(...NETWORKS);
  const id = fc.constantFrom("t1", "t2", "t3");
  const spec: fc.Arbitrary<TargetSpec> = fc.oneof(
    fc.record({
      kind: fc.constant("offchain" as const),
      id,
      pair,
      entryType: fc.constantFrom(...ENTRY_TYPES),
      aggregation: fc.constantFrom(...AGGREGATIONS),
      interval: fc.constant("1s" as const),
      expiry: fc.constant(null),
    }),
    fc.record({
      kind: fc.constant("onchain" as const),
      id,
      pair,
      network,
      aggregation: fc.constantFrom(...AGGREGATIONS),
    }),
    fc.record({
      kind: fc.constant("publishers" as const),
      id,
      network,
      publisherType: fc.constantFrom(...PUBLISHER_TYPES),
    }),
    fc.record({ kind: fc.constant("funding" as const), id, pair, source: fc.constantFrom("binance", "okx") }),
    fc.record({ kind: fc.constant("vault" as const), id, vaultId: fc.constantFrom("v1", "v2") }),
  );
  const targets = fc.array(fc.record({ spec, key: fc.constantFrom("a", "b", "c") }), { maxLength: 12 });
  const value = fc.constantFrom(
    "BTC/USD",
    "ETH/USD",
    "offchain",
    "onchain",
    "spot",
    "perp",
    "t1",
    "x",
    ...NETWORKS,
  );
  const name = fc.constantFrom(
    "pair",
    "market",
    "entry_type",
    "network",
    "source",
    "vault",
    "endpoint",
    "window",
  );
  const noise = fc.dictionary(name, value, { maxKeys: 4 });
  const rule = fc.constantFrom<RuleKind>(...RULE_CONFIG_KINDS, "sink_error", "monitor_stalled");

  /** An alert's rule, and where its labels come from: a configured target's (under that rule or another), over noise. */
  const query = fc.record({
    kind: rule,
    extra: noise,
    from: fc.option(fc.record({ target: fc.nat(), rule: fc.option(fc.constantFrom(...RULE_CONFIG_KINDS)) })),
  });

  it("gives the linear scan's answer: the key the matching targets agree on, else none", () => {
    fc.assert(
      fc.property(targets, fc.array(query, { minLength: 1, maxLength: 8 }), (configured, queries) => {
        const indexed = keyOfLabelsFor(configured); // one index, many lookups (each rule's built at its first)
        const linear = linearKeyOfLabels(configured);
        for (const { kind, extra, from } of queries) {
          const source = from === null ? undefined : configured[from.target % Math.max(1, configured.length)];
          const labelsKind = from?.rule ?? (isRuleConfigKind(kind) ? kind : "price_change");
          const labels: AlertLabels =
            source === undefined ? extra : { ...extra, ...RULES[labelsKind].targetLabels(source.spec) };
          expect(indexed(kind, labels)).toBe(linear(kind, labels));
        }
      }),
      { numRuns: 1_000 },
    );
  });
});
