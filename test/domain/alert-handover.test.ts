import { describe, expect, it } from "vitest";
import { alertStateByKey, CAUSE_OWNERSHIP_KEY, NO_ALERTS } from "../../src/domain/alert-handover.js";
import {
  activeAlerts,
  adoptAlertState,
  createMonitorState,
  exportAlertState,
  observe,
  releaseAlertState,
  retainTargets,
  type MonitorState,
} from "../../src/domain/monitor.js";
import { BTC_OFF, ETH_OFF, T0, obs, pairPrice, rule, timeline } from "./helpers.js";

const rules = [rule("upstream_error", {}, { threshold: 2 })];
const keyOf = (targetId: string): string | undefined =>
  targetId === BTC_OFF.id ? "pair:BTC/USD" : targetId === ETH_OFF.id ? "pair:ETH/USD" : undefined;

/** A monitor whose upstream_error fires on BTC/USD and on ETH/USD (two failed polls each). */
function firingBtcAndEth(): MonitorState {
  const { state, log } = timeline(rules, [
    [0, "fail"],
    [1000, "fail"],
  ]);
  expect(log).toEqual(["upstream_error:first@1000"]);
  observe(state, obs.offFail(T0 + 1000, ETH_OFF), rules, T0 + 1000);
  const { transitions } = observe(state, obs.offFail(T0 + 2000, ETH_OFF), rules, T0 + 2000);
  expect(transitions.map((a) => a.reason)).toEqual(["first"]);
  return state;
}

describe("alert state by ownership key (cluster handover)", () => {
  it("splits the persisted alerts by the key of the targets they come from", () => {
    const exported = exportAlertState(firingBtcAndEth());
    const byKey = alertStateByKey(exported, keyOf);
    expect([...byKey.keys()].sort()).toEqual(["pair:BTC/USD", "pair:ETH/USD"]);
    expect(byKey.get("pair:BTC/USD")?.alerts.map((a) => a.status)).toEqual(["firing"]);
    expect(byKey.get("pair:ETH/USD")?.alerts.map((a) => a.status)).toEqual(["firing"]);
  });

  it("leaves out alerts of unknown targets, of no target, and of targets under several keys", () => {
    const [alert] = exportAlertState(firingBtcAndEth()).alerts;
    if (alert === undefined) throw new Error("no alert");
    const state = {
      version: 1 as const,
      alerts: [
        { ...alert, fingerprint: "0000000000000001", targetIds: [] },
        { ...alert, fingerprint: "0000000000000002", targetIds: ["offchain:XYZ/USD"] },
        { ...alert, fingerprint: "0000000000000003", targetIds: [BTC_OFF.id, ETH_OFF.id] },
      ],
    };
    expect(alertStateByKey(state, keyOf).size).toBe(0);
    expect(alertStateByKey(NO_ALERTS, keyOf).size).toBe(0);
  });

  it("puts cause alerts (no targets) under the reserved cause key, so they move with its owner", () => {
    const [alert] = exportAlertState(firingBtcAndEth()).alerts;
    if (alert === undefined) throw new Error("no alert");
    const cause = {
      ...alert,
      fingerprint: "0000000000000004",
      rule: "upstream_down" as const,
      targetIds: [],
    };
    const byKey = alertStateByKey({ version: 1, alerts: [cause] }, keyOf);
    expect([...byKey.keys()]).toEqual([CAUSE_OWNERSHIP_KEY]);
    expect(byKey.get(CAUSE_OWNERSHIP_KEY)?.alerts.map((a) => a.fingerprint)).toEqual([cause.fingerprint]);
  });

  it("a new owner that adopts a firing alert does not announce it again, and resolves it on recovery", () => {
    const moved = alertStateByKey(exportAlertState(firingBtcAndEth()), keyOf).get("pair:BTC/USD");
    if (moved === undefined) throw new Error("nothing to move");
    const owner = createMonitorState();
    const adopted = adoptAlertState(owner, moved);
    expect(adopted.map((a) => `${a.rule}:${a.reason}`)).toEqual(["upstream_error:first"]);
    expect(activeAlerts(owner)).toEqual(adopted);
    // still failing: nothing new; recovered: exactly one resolve, with the original start
    expect(timeline(rules, [[5000, "fail"]], owner).log).toEqual([]);
    const after = timeline(rules, [[6000, 9]], owner);
    expect(after.log).toEqual(["upstream_error:resolved@6000"]);
    expect(after.transitions[0]?.startsAt).toBe(adopted[0]?.startsAt);
  });

  it("without adoption the same new owner announces the alert again (what the checkpoint prevents)", () => {
    expect(
      timeline(rules, [
        [5000, "fail"],
        [6000, "fail"],
      ]).log,
    ).toEqual(["upstream_error:first@6000"]);
  });

  it("an old owner that releases a target's alerts stops the target without a target_removed resolve", () => {
    const state = firingBtcAndEth();
    const moved = alertStateByKey(exportAlertState(state), keyOf).get("pair:BTC/USD");
    releaseAlertState(state, moved?.alerts.map((a) => a.fingerprint) ?? []);
    const { transitions } = retainTargets(state, new Set([ETH_OFF.id]), rules, T0 + 3000);
    expect(transitions).toEqual([]);
    // the other target's alert stayed, and still resolves on its own
    expect(activeAlerts(state).map((a) => a.labels["pair"])).toEqual(["ETH/USD"]);
    const recovered = observe(
      state,
      obs.off(pairPrice("100", T0 + 4000, [], 9), T0 + 4000, ETH_OFF),
      rules,
      T0 + 4000,
    );
    expect(recovered.transitions.map((a) => a.reason)).toEqual(["resolved"]);
  });

  it("releasing without adopting elsewhere is what used to resolve: retainTargets alone resolves target_removed", () => {
    const state = firingBtcAndEth();
    const { transitions } = retainTargets(state, new Set([ETH_OFF.id]), rules, T0 + 3000);
    expect(transitions.map((a) => `${a.labels["pair"]}:${String(a.context["resolvedBy"])}`)).toEqual([
      "BTC/USD:target_removed",
    ]);
  });
});
