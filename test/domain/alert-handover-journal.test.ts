// A new owner brings a lagging alert checkpoint up to the cluster's log: a transition its owner published but had
// not checkpointed when it died is neither announced again nor resolved twice.
import { describe, expect, it } from "vitest";
import {
  alertStateByKey,
  keyOfLabelsFor,
  NO_ALERTS,
  reconcileWithJournal,
} from "../../src/domain/alert-handover.js";
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
