// Alert lifecycle timelines through the monitor API: time is an argument, no timers, no mocks.
import { describe, expect, it } from "vitest";
import { createEngineState, dropRecord, putRecord, type AlertRecord } from "../../src/domain/alert-engine.js";
import {
  activeAlerts,
  createMonitorState,
  exportAlertState,
  importAlertState,
  restoreAnnounced,
  retainTargets,
  tick,
} from "../../src/domain/monitor.js";
import { fingerprintOf } from "../../src/domain/fingerprint.js";
import { parsePersistedAlertState } from "../../src/state/alert-checkpoint.js";
import { BTC_OFF, T0, rule, timeline } from "./helpers.js";

const low = (extra: Parameters<typeof rule>[2] = {}) =>
  rule("low_sources", { market: "offchain" }, { threshold: 3, ...extra });

describe("alert engine", () => {
  it("pending that never fires announces nothing", () => {
    const { log } = timeline(
      [low({ forMs: 10_000 })],
      [
        [0, 2],
        [5000, "tick"],
        [9000, 5],
        [20_000, "tick"],
      ],
    );
    expect(log).toEqual([]);
  });

  it("pending fires after `for` on a tick", () => {
    const { log } = timeline(
      [low({ forMs: 10_000 })],
      [
        [0, 2],
        [9999, "tick"],
        [10_000, "tick"],
      ],
    );
    expect(log).toEqual(["low_sources:first@10000"]);
  });

  it("value oscillating inside the fire/clear band does not resolve", () => {
    const rules = [low({ threshold: 3, clearThreshold: 5 })];
    const { log } = timeline(rules, [
      [0, 3],
      [1000, 4],
      [2000, 5],
      [3000, 4],
      [4000, 6],
    ]);
    expect(log).toEqual(["low_sources:first@0", "low_sources:resolved@4000"]);
  });

  it("minFiring hold-down delays the resolve until a tick after it expires", () => {
    const { log } = timeline(
      [low({ minFiringMs: 30_000 })],
      [
        [0, 2],
        [1000, 9],
        [29_999, "tick"],
        [30_000, "tick"],
      ],
    );
    expect(log).toEqual(["low_sources:first@0", "low_sources:resolved@30000"]);
  });

  it("repeat reminders every repeatIntervalMs while firing", () => {
    const { log } = timeline(
      [low({ repeatIntervalMs: 60_000 })],
      [
        [0, 2],
        [59_000, "tick"],
        [60_000, "tick"],
        [61_000, "tick"],
        [120_000, "tick"],
      ],
    );
    expect(log).toEqual(["low_sources:first@0", "low_sources:repeat@60000", "low_sources:repeat@120000"]);
  });

  it("flapping holds the alert firing, marks it, and releases when calm", () => {
    const rules = [low({ flapMaxTransitions: 3, flapWindowMs: 60_000, repeatIntervalMs: 1000 })];
    const steps: [number, number | "tick"][] = [
      [0, 2],
      [1000, 9],
      [2000, 2],
      [3000, 9],
      [4000, 2],
      [5000, 9],
      [6000, 2],
      [7000, 9],
    ];
    const { log, state, transitions } = timeline(rules, steps);
    // Flips 1-3 are announced; from the 4th on the alert stays firing without announcing each flip.
    expect(log.filter((l) => !l.includes("repeat"))).toEqual([
      "low_sources:first@0",
      "low_sources:resolved@1000",
      "low_sources:first@2000",
    ]);
    expect(activeAlerts(state)).toHaveLength(1);
    expect(transitions.at(-1)?.context["flapping"]).toBe(true);
    const calm = timeline(rules, [[70_000, "tick"]], state);
    expect(calm.log).toEqual(["low_sources:resolved@70000"]);
  });

  it("upstream_error inhibits the target's alerts, which re-evaluate on fresh data after recovery", () => {
    const rules = [
      rule("upstream_error", {}, { threshold: 2 }),
      rule("stale_price", { market: "offchain" }, { threshold: 5000 }),
      low(),
    ];
    const { log } = timeline(rules, [
      [0, 2], // low_sources fires
      [1000, "fail"],
      [2000, "fail"], // upstream fires → mutes
      [10_000, "tick"], // stale but muted
      [11_000, 9], // success: upstream resolves, low_sources resolves from fresh data
    ]);
    expect(log).toEqual([
      "low_sources:first@0",
      "upstream_error:first@2000",
      "upstream_error:resolved@11000",
      "low_sources:resolved@11000",
    ]);
  });

  it("failed polls never resolve an alert", () => {
    const { log } = timeline(
      [low()],
      [
        [0, 2],
        [1000, "fail"],
        [2000, "fail"],
        [3000, "tick"],
      ],
    );
    expect(log).toEqual(["low_sources:first@0"]);
  });

  it("removing a target resolves its alerts (retainTargets)", () => {
    const rules = [low()];
    const { state } = timeline(rules, [[0, 2]]);
    const e = retainTargets(state, new Set(["other"]), rules, T0 + 5000);
    expect(e.transitions.map((t) => [t.status, t.context["resolvedBy"]])).toEqual([
      ["resolved", "target_removed"],
    ]);
    expect(activeAlerts(e.state)).toEqual([]);
    // The target coming back starts from scratch and re-announces.
    expect(timeline(rules, [[6000, 2]], e.state).log).toEqual(["low_sources:first@6000"]);
  });

  it("removing or disabling a rule resolves its alerts on the next tick", () => {
    const { state } = timeline([low()], [[0, 2]]);
    const e = tick(state, [{ ...low(), enabled: false }], T0 + 1000);
    expect(e.transitions.map((t) => t.context["resolvedBy"])).toEqual(["rule_removed"]);
  });

  it("export/import: a firing alert is not re-announced and resolves when the condition clears", () => {
    const rules = [low({ repeatIntervalMs: 3_600_000 })];
    const { state } = timeline(rules, [[0, 2]]);
    // through the state layer's validation, as a restart reads it
    const persisted = parsePersistedAlertState(JSON.parse(JSON.stringify(exportAlertState(state))));
    const restored = importAlertState(persisted);
    expect(activeAlerts(restored)).toEqual(activeAlerts(state));
    const after = timeline(
      rules,
      [
        [1000, 2],
        [2000, "tick"],
        [3000, 9],
      ],
      restored,
    );
    expect(after.log).toEqual(["low_sources:resolved@3000"]);
    expect(after.transitions[0]?.startsAt).toBe(new Date(T0).toISOString());
  });

  it("restoreAnnounced replays journaled firing and resolved alerts", () => {
    const rules = [low()];
    const { transitions } = timeline(rules, [
      [0, 2],
      [1000, 9],
      [2000, 2],
    ]);
    const restored = restoreAnnounced(createMonitorState(), transitions);
    expect(activeAlerts(restored).map((a) => a.reason)).toEqual(["first"]);
    expect(timeline(rules, [[3000, 2]], restored).log).toEqual([]);
    expect(timeline(rules, [[4000, 9]], restored).log).toEqual(["low_sources:resolved@4000"]);
  });

  it("an alert restored from the journal knows the key its labels name (upstream_error's target, a publisher)", () => {
    const announced = (
      rule: "upstream_error" | "publisher_stale" | "low_sources",
      labels: Record<string, string>,
    ) => ({
      fingerprint: fingerprintOf(rule, labels),
      status: "firing" as const,
      rule,
      severity: "warning" as const,
      labels,
      summary: "restored",
      value: 1,
      threshold: 1,
      startsAt: new Date(T0).toISOString(),
      endsAt: null,
      reason: "first" as const,
      context: {},
    });
    const restored = restoreAnnounced(createMonitorState(), [
      announced("upstream_error", { endpoint: BTC_OFF.id, pair: "BTC/USD", market: "offchain" }),
      announced("publisher_stale", { network: "starknet-mainnet", publisher: "AVNU" }),
      announced("low_sources", { pair: "BTC/USD", market: "offchain" }),
    ]);
    const keys = exportAlertState(restored).alerts.map((a) => [a.rule, a.targetIds, a.scopeKey]);
    expect(keys).toEqual([
      ["upstream_error", [BTC_OFF.id], ""],
      ["publisher_stale", [], "AVNU"],
      ["low_sources", [], ""],
    ]);
  });

  it("same rule and labels give the same fingerprint across states", () => {
    const a = timeline([low()], [[0, 2]]).transitions[0]?.fingerprint;
    const b = timeline([low()], [[50, 1]]).transitions[0]?.fingerprint;
    expect(a).toBe(b);
    expect(BTC_OFF.id).toBeDefined();
  });
});

describe("records per rule", () => {
  const record = (fingerprint: string, ruleId: string): AlertRecord => ({
    fingerprint,
    ruleId,
    ruleKind: "low_sources",
    labels: {},
    targetIds: [],
    scopeKey: "BTC/USD",
    status: "firing",
    rawActive: true,
    pendingSinceMs: T0,
    startsAtMs: T0,
    lastAnnouncedMs: T0,
    flipTimesMs: [],
    flapping: false,
    finding: null,
    announced: null,
    checkedRule: null,
    causedBy: null,
  });

  it("counts records per rule id through replace and drop, with no zero entries", () => {
    const engine = createEngineState();
    const has = (ruleId: string): boolean => engine.recordsByRule.has(ruleId);
    expect(has("low_sources")).toBe(false);
    putRecord(engine, record("a", "low_sources"));
    putRecord(engine, record("a", "low_sources")); // replaced, not added
    putRecord(engine, record("b", "low_sources"));
    expect([has("low_sources"), has("low_2")]).toEqual([true, false]);
    dropRecord(engine, "a");
    dropRecord(engine, "a"); // already gone
    expect(has("low_sources")).toBe(true);
    dropRecord(engine, "b");
    expect(has("low_sources")).toBe(false);
    expect(engine.recordsByRule.size).toBe(0);
    putRecord(engine, record("c", "low_sources"));
    putRecord(engine, record("c", "low_2")); // the same fingerprint under another rule id
    expect([has("low_sources"), has("low_2")]).toEqual([false, true]);
  });
});
