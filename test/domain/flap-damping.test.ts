// Flap damping: a held alert shows its current value, reminds on schedule, and resolves once clear for the flap window.
import { describe, expect, it } from "vitest";
import {
  activeAlerts,
  createMonitorState,
  exportAlertState,
  importAlertState,
  observe,
} from "../../src/domain/monitor.js";
import type { RuleConfig } from "../../src/domain/rules/index.js";
import { T0, obs, pairPrice, rule, timeline } from "./helpers.js";
import { parsePersistedAlertState } from "../../src/state/alert-checkpoint.js";

const S = 1_000;
const W = 60 * S;
const low = (extra: Parameters<typeof rule>[2] = {}) =>
  rule(
    "low_sources",
    { market: "offchain" },
    { threshold: 3, flapMaxTransitions: 3, flapWindowMs: W, ...extra },
  );

type Step = readonly [number, number | "fail" | "tick"];

// fire, clear, fire, clear at 1 s steps: the fourth flip (at 3 s) is more than 3 in the window, so held
const FLAP: readonly Step[] = [
  [0, 2],
  [1 * S, 9],
  [2 * S, 2],
  [3 * S, 9],
];

describe("flap damping", () => {
  const cases: readonly { name: string; rules: RuleConfig[]; steps: readonly Step[]; log: string[] }[] = [
    {
      name: "held, then resolves once clear for the flap window (not when old flips age out)",
      rules: [low()],
      steps: [...FLAP, [62 * S, 9], [62 * S + 999, "tick"], [63 * S, "tick"]],
      log: [
        "low_sources:first@0",
        "low_sources:resolved@1000",
        "low_sources:first@2000",
        "low_sources:resolved@63000",
      ],
    },
    {
      name: "a recurrence while held is not announced and restarts the clear clock",
      rules: [low()],
      steps: [...FLAP, [30 * S, 2], [31 * S, 9], [90 * S, "tick"], [91 * S, "tick"]],
      log: [
        "low_sources:first@0",
        "low_sources:resolved@1000",
        "low_sources:first@2000",
        "low_sources:resolved@91000",
      ],
    },
    {
      name: "reminders go on while held",
      rules: [low({ repeatIntervalMs: 20 * S })],
      steps: [...FLAP, [22 * S, "tick"], [42 * S, "tick"], [63 * S, "tick"]],
      log: [
        "low_sources:first@0",
        "low_sources:resolved@1000",
        "low_sources:first@2000",
        "low_sources:repeat@22000",
        "low_sources:repeat@42000",
        "low_sources:resolved@63000",
      ],
    },
    {
      name: "hold-down (minFiringMs) still comes first when it is longer",
      rules: [low({ minFiringMs: 120 * S })],
      // the fire at 0 s is held down to 120 s: the flips are not announced, and by then it is clear for the window
      steps: [...FLAP, [63 * S, "tick"], [119 * S, "tick"], [120 * S, "tick"]],
      log: ["low_sources:first@0", "low_sources:resolved@120000"],
    },
    {
      name: "damping off (flapMaxTransitions 0): every flip is announced",
      rules: [low({ flapMaxTransitions: 0 })],
      steps: FLAP,
      log: [
        "low_sources:first@0",
        "low_sources:resolved@1000",
        "low_sources:first@2000",
        "low_sources:resolved@3000",
      ],
    },
  ];
  it.each(cases)("$name", ({ rules, steps, log }) => {
    expect(timeline(rules, steps).log).toEqual(log);
  });

  it("a held alert shows the current value and says until when it is held, without a notification", () => {
    const rules = [low()];
    const { state, transitions } = timeline(rules, [
      [0, 2],
      [1 * S, 9],
      [2 * S, 1],
    ]);
    expect(activeAlerts(state)[0]).toMatchObject({ value: 1, summary: transitions.at(-1)?.summary });
    // the clear that starts the hold: no transition, but the active alert follows it
    expect(timeline(rules, [[3 * S, 8]], state).transitions).toEqual([]);
    const held = activeAlerts(state)[0];
    const until = new Date(T0 + 3 * S + W).toISOString();
    expect(held).toMatchObject({
      status: "firing",
      value: 8,
      reason: "first",
      startsAt: new Date(T0 + 2 * S).toISOString(),
      summary: `BTC/USD offchain price aggregated from 8 sources (threshold ≤ 3); flapping: held firing until ${until} unless it recurs`,
      context: { flapping: true, heldUntil: until },
    });
    // the resolve carries the value of the last measure
    const resolved = timeline(rules, [[3 * S + W, "tick"]], state).transitions;
    expect(resolved).toMatchObject([{ status: "resolved", value: 8, context: { flapping: true } }]);
    expect(resolved[0]?.summary).not.toContain("held firing");
  });

  it("upstream_error held after polls recovered says so, no longer mutes the target, and resolves when clear for the window", () => {
    const rules = [
      rule("upstream_error", {}, { threshold: 1, flapMaxTransitions: 3, flapWindowMs: W }),
      rule("low_sources", { market: "offchain" }, { threshold: 3 }),
    ];
    const { state, log } = timeline(rules, [
      [0, "fail"],
      [1 * S, 9],
      [2 * S, "fail"],
      [3 * S, 9], // recovered; fourth flip: held
    ]);
    expect(log).toEqual([
      "upstream_error:first@0",
      "upstream_error:resolved@1000",
      "upstream_error:first@2000",
    ]);
    const held = activeAlerts(state).find((a) => a.rule === "upstream_error");
    expect(held?.summary).toMatch(/^offchain:BTC\/USD polls succeed again; flapping: held firing until /);
    expect(held).toMatchObject({ value: 0, context: { failures: 0, lastErrorCode: null } });
    // restored from a checkpoint, the held upstream_error does not inhibit either
    const restored = importAlertState(
      parsePersistedAlertState(JSON.parse(JSON.stringify(exportAlertState(state)))),
    );
    expect(timeline(rules, [[4 * S, 2]], restored).log).toEqual(["low_sources:first@4000"]);
    // fresh data while upstream_error is held: the target's own alerts are evaluated (not inhibited)
    expect(timeline(rules, [[4 * S, 2]], state).log).toEqual(["low_sources:first@4000"]);
    expect(
      timeline(
        rules,
        [
          [62 * S, 2],
          [63 * S, "tick"],
        ],
        state,
      ).log,
    ).toEqual(["upstream_error:resolved@63000"]);
  });

  it("a price_change held by flap damping follows the current move (the ETH/USD 10 s report)", () => {
    const rules = [
      rule(
        "price_change",
        { windowMs: 10 * S, market: "offchain" },
        { threshold: 0.02, flapMaxTransitions: 3, flapWindowMs: 600 * S },
      ),
    ];
    const state = createMonitorState();
    const prices = ["100", "102.37", "103", "105.6", "106"];
    // one price per 10 s, each judged against the previous one
    const transitions = prices.flatMap(
      (price, i) =>
        observe(state, obs.off(pairPrice(price, T0 + i * 10 * S), T0 + i * 10 * S), rules, T0 + i * 10 * S)
          .transitions,
    );
    expect(transitions.map((t) => t.status)).toEqual(["firing", "resolved", "firing"]);
    expect(transitions[0]?.summary).toMatch(/^BTC\/USD moved \+2\.37% in 10s/);
    const active = activeAlerts(state);
    expect(active).toHaveLength(1);
    expect(active[0]?.summary).toMatch(
      /^BTC\/USD moved \+0\.38% in 10s \(threshold 2%\); flapping: held firing until /,
    );
  });

  it("a held alert restored from a checkpoint reminds with one hold note, not one per restart", () => {
    const rules = [low({ repeatIntervalMs: 20 * S })];
    const { state } = timeline(rules, FLAP);
    const restored = importAlertState(
      parsePersistedAlertState(JSON.parse(JSON.stringify(exportAlertState(state)))),
    );
    const { transitions } = timeline(rules, [[22 * S, "tick"]], restored);
    expect(transitions.map((t) => t.reason)).toEqual(["repeat"]);
    expect(transitions[0]?.summary.match(/flapping: held firing until/g)).toHaveLength(1);
    expect(transitions[0]?.context["heldUntil"]).toBe(new Date(T0 + 3 * S + W).toISOString());
  });

  it("held until the later of the flap window and the hold-down", () => {
    const { state } = timeline([low({ minFiringMs: 120 * S })], FLAP);
    expect(activeAlerts(state)[0]?.context["heldUntil"]).toBe(new Date(T0 + 120 * S).toISOString());
  });

  it("an alert in hold-down whose condition cleared says so too (no flapping)", () => {
    const { state } = timeline(
      [low({ minFiringMs: 30 * S, flapMaxTransitions: 0 })],
      [
        [0, 2],
        [1 * S, 9],
      ],
    );
    const until = new Date(T0 + 30 * S).toISOString();
    expect(activeAlerts(state)[0]).toMatchObject({
      summary: `BTC/USD offchain price aggregated from 9 sources (threshold ≤ 3); held firing until ${until} unless it recurs`,
      context: { heldUntil: until },
    });
    expect(activeAlerts(state)[0]?.context["flapping"]).toBeUndefined();
  });
});
