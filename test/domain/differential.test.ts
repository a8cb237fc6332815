// Differential property test: the fast evaluator (calm shortcuts on) and the exact one (every measure
// computed and fed to the alert engine) announce the same transitions for any observation sequence.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { packageRoot } from "../../src/config/package-root.js";
import type { AlertPayload } from "../../src/domain/events.js";
import {
  activeAlerts,
  createMonitorState,
  exportAlertState,
  importAlertState,
  observe,
  restoreAnnounced,
  retainTargets,
  tick,
  type Evaluation,
  type MonitorState,
} from "../../src/domain/monitor.js";
import type { PollObservation } from "../../src/domain/observation.js";
import type { RuleConfig, RuleConfigKind } from "../../src/domain/rules/index.js";
import type { TargetSpec } from "../../src/domain/types.js";
import { parsePersistedAlertState } from "../../src/state/alert-checkpoint.js";
import {
  BTC_OFF,
  BTC_ON,
  ETH_OFF,
  FUND,
  PUBS,
  T0,
  VAULT,
  entrySet,
  failure,
  fundingRates,
  pairPrice,
  publisher,
  rule,
  vault,
} from "./helpers.js";

const ETH_ON: Extract<TargetSpec, { kind: "onchain" }> = {
  ...BTC_ON,
  id: "onchain:ETH/USD",
  pair: "ETH/USD",
};
const BTC_PERP: Extract<TargetSpec, { kind: "offchain" }> = {
  ...BTC_OFF,
  id: "offchain:BTC/USD:perp",
  entryType: "perp",
};
const TARGETS: readonly TargetSpec[] = [BTC_OFF, ETH_OFF, BTC_PERP, BTC_ON, ETH_ON, PUBS, FUND, VAULT];
const PUBLISHERS = ["ALICE", "BOB", "CAROL"] as const;
const SCOPE_KEYS = ["BTC/USD", "ETH/USD", "v1", "ALICE", "BOB", "offchain:BTC/USD", "starknet-mainnet"];

const { config } = loadConfig({ env: {}, cwd: packageRoot() });
const SHIPPED: readonly RuleConfig[] = config.rules;

const fraction = fc.integer({ min: 1, max: 600 }).map((n) => n / 10_000);
const market = fc.constantFrom("offchain" as const, "onchain" as const);

// The kind-specific fields and a threshold in the kind's unit.
const SPECIFIC: { readonly [K in RuleConfigKind]: fc.Arbitrary<readonly [object, number]> } = {
  price_change: fc.tuple(fc.record({ windowMs: fc.constantFrom(2_000, 5_000, 10_000), market }), fraction),
  price_level: fc.tuple(
    fc.record({ direction: fc.constantFrom("above" as const, "below" as const), market }),
    fc.integer({ min: 90, max: 110 }),
  ),
  variation: fc.tuple(fc.record({ window: fc.constantFrom("1h" as const, "1d" as const) }), fraction),
  stale_price: fc.tuple(fc.record({ market }), fc.integer({ min: 1_000, max: 20_000 })),
  low_sources: fc.tuple(fc.record({ market }), fc.integer({ min: 1, max: 4 })),
  component_deviation: fc.tuple(fc.record({ market }), fraction),
  onchain_offchain_deviation: fc.tuple(fc.record({ maxAgeMs: fc.constantFrom(5_000, 60_000) }), fraction),
  publisher_stale: fc.tuple(fc.record({ perFeed: fc.boolean() }), fc.integer({ min: 1_000, max: 30_000 })),
  publisher_missing: fc.tuple(
    fc.record({ publishers: fc.subarray([...PUBLISHERS, "DAVE"], { minLength: 1 }) }),
    fc.constant(1),
  ),
  funding_rate: fc.tuple(
    fc.constant({}),
    fraction.map((f) => f / 10),
  ),
  vault_status: fc.tuple(fc.constant({}), fc.constant(1)),
  vault_share_price: fc.tuple(fc.record({ windowMs: fc.constantFrom(2_000, 10_000) }), fraction),
  upstream_error: fc.tuple(fc.constant({}), fc.integer({ min: 1, max: 3 })),
  upstream_down: fc.tuple(
    fc.record({ minFraction: fc.constantFrom(0, 0.5), windowMs: fc.constantFrom(2_000, 10_000) }),
    fc.integer({ min: 1, max: 3 }),
  ),
  publisher_outage: fc.tuple(fc.constant({}), fc.integer({ min: 1, max: 2 })),
  source_deviation: fc.tuple(fc.constant({}), fc.integer({ min: 1, max: 2 })),
  market_move: fc.tuple(
    fc.record({ minFraction: fc.constantFrom(0, 0.5), windowMs: fc.constantFrom(5_000, 60_000) }),
    fc.integer({ min: 1, max: 3 }),
  ),
};

const generatedRule: fc.Arbitrary<RuleConfig> = fc
  .constantFrom(...(Object.keys(SPECIFIC) as RuleConfigKind[]))
  .chain((kind) =>
    fc.record({
      kind: fc.constant(kind),
      specific: SPECIFIC[kind],
      id: fc.constantFrom(kind, `${kind}_b`),
      enabled: fc.constantFrom(true, true, true, false),
      clearFactor: fc.constantFrom(1, 0.75, 0.5, 1.25),
      forMs: fc.constantFrom(0, 0, 2_000),
      minFiringMs: fc.constantFrom(0, 3_000),
      repeatIntervalMs: fc.constantFrom(0, 4_000),
      flap: fc.constantFrom([0, 0], [20_000, 2]),
      pairs: fc.oneof(fc.constant([]), fc.subarray(SCOPE_KEYS, { minLength: 1, maxLength: 3 })),
      overrides: fc.oneof(
        fc.constant({}),
        fc.record({ key: fc.constantFrom(...SCOPE_KEYS, BTC_OFF.id), factor: fc.constantFrom(0.5, 2) }),
      ),
    }),
  )
  .map(({ kind, specific: [fields, threshold], id, enabled, clearFactor, flap, overrides, ...common }) =>
    rule(kind, fields as never, {
      ...common,
      id,
      enabled,
      threshold,
      clearThreshold: threshold * clearFactor,
      flapWindowMs: flap[0],
      flapMaxTransitions: flap[1],
      overrides: "key" in overrides ? { [overrides.key]: { threshold: threshold * overrides.factor } } : {},
    }),
  );

// A rules array: the shipped rules, some generated ones, or both.
const rulesArray: fc.Arbitrary<readonly RuleConfig[]> = fc.oneof(
  fc.constant(SHIPPED),
  fc.array(generatedRule, { minLength: 1, maxLength: 8 }),
  fc.array(generatedRule, { maxLength: 4 }).map((extra) => [...SHIPPED, ...extra]),
);

// A price move in basis points per poll: calm, around the thresholds, or large.
const moveBp = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: -15, max: 15 }) },
  { weight: 2, arbitrary: fc.integer({ min: -300, max: 300 }) },
  { weight: 1, arbitrary: fc.integer({ min: -800, max: 800 }) },
);

const step = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("price" as const),
      target: fc.constantFrom(BTC_OFF, BTC_OFF, BTC_OFF, BTC_ON, BTC_ON, ETH_OFF, BTC_PERP, ETH_ON),
      moveBp,
      polls: fc.integer({ min: 1, max: 12 }),
      spreadsBp: fc.array(moveBp, { maxLength: 4 }),
      numSources: fc.integer({ min: 0, max: 6 }),
      lagMs: fc.constantFrom(0, 0, 0, 25_000, 90_000),
      variation: fc.option(fraction.map((f) => f - 0.03)),
      decimalsKnown: fc.constantFrom(true, true, true, false),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("fail" as const),
      target: fc.constantFrom(...TARGETS),
      times: fc.integer({ min: 1, max: 4 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("publishers" as const),
      present: fc.subarray([...PUBLISHERS]),
      ageMs: fc.array(fc.constantFrom(0, 500, 5_000, 40_000, -1), { minLength: 3, maxLength: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("funding" as const),
      rate: fraction.map((f) => f / 10 - 0.003),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("vault" as const),
      status: fc.constantFrom("live", "live", "paused"),
      paused: fc.constantFrom(false, false, true, null),
      moveBp,
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("tick" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("reload" as const), rules: rulesArray }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("checkpoint" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("restart" as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("retain" as const),
      drop: fc.subarray([...TARGETS], { maxLength: 2 }),
    }),
  },
);

// Time between steps: mostly a poll period, sometimes a gap longer than the windows.
const stepMs = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 100, max: 1_500 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_500, max: 12_000 }) },
);

type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

// What a step turns into, given the prices so far (mutated: each target's price follows its moves).
type Input =
  | { readonly kind: "observe"; readonly observations: readonly PollObservation[] }
  | { readonly kind: "tick" }
  | { readonly kind: "checkpoint" }
  | { readonly kind: "restart" }
  | { readonly kind: "reload"; readonly rules: readonly RuleConfig[] }
  | { readonly kind: "retain"; readonly ids: ReadonlySet<string> };

const fixed = (n: number): string => n.toFixed(8);

function toInput(s: Step, nowMs: number, prices: Map<string, number>): Input {
  switch (s.kind) {
    case "tick":
    case "checkpoint":
    case "restart":
      return s;
    case "reload":
      return { kind: "reload", rules: s.rules };
    case "retain":
      return { kind: "retain", ids: new Set(TARGETS.filter((t) => !s.drop.includes(t)).map((t) => t.id)) };
    case "fail": {
      // the value's type follows the target kind; a failure carries none
      const failed = {
        kind: s.target.kind,
        target: s.target,
        result: { ok: false, error: failure() },
        observedAtMs: nowMs,
      } as PollObservation;
      return { kind: "observe", observations: Array.from({ length: s.times }, () => failed) };
    }
    case "publishers": {
      const list = s.present.map((name) => {
        const age = s.ageMs[PUBLISHERS.indexOf(name)] ?? 0;
        return publisher(name, age < 0 ? null : nowMs - age, [["BTC/USD", nowMs - Math.max(age, 0) * 2]]);
      });
      return {
        kind: "observe",
        observations: [
          {
            kind: "publishers",
            target: PUBS,
            result: { ok: true, value: list },
            observedAtMs: nowMs,
          },
        ],
      };
    }
    case "funding":
      return {
        kind: "observe",
        observations: [
          {
            kind: "funding",
            target: FUND,
            result: { ok: true, value: fundingRates(s.rate, nowMs) },
            observedAtMs: nowMs,
          },
        ],
      };
    case "vault": {
      const share = (prices.get(VAULT.id) ?? 1) * (1 + s.moveBp / 10_000);
      prices.set(VAULT.id, share);
      return {
        kind: "observe",
        observations: [
          {
            kind: "vault",
            target: VAULT,
            result: { ok: true, value: vault(s.status, s.paused, fixed(share)) },
            observedAtMs: nowMs,
          },
        ],
      };
    }
    case "price":
      // a burst of polls one second apart (the last one at nowMs), so windowed rules find their reference
      return {
        kind: "observe",
        observations: Array.from({ length: s.polls }, (_, i) =>
          pricePollObservation(s, nowMs - (s.polls - 1 - i) * 1_000, prices),
        ),
      };
  }
}

function pricePollObservation(
  s: Extract<Step, { kind: "price" }>,
  nowMs: number,
  prices: Map<string, number>,
): PollObservation {
  const price = (prices.get(s.target.id) ?? 100) * (1 + s.moveBp / 10_000);
  prices.set(s.target.id, price);
  const atMs = nowMs - s.lagMs;
  const parts = s.spreadsBp.map(
    (bp, i) => [PUBLISHERS[i % 3]! + String(i), fixed(price * (1 + bp / 10_000))] as const,
  );
  if (s.target.kind === "offchain") {
    const value = pairPrice(fixed(price), atMs, parts, s.numSources);
    return { kind: "offchain", target: s.target, result: { ok: true, value }, observedAtMs: nowMs };
  }
  const value = entrySet(fixed(price), atMs, parts, {
    numSources: s.numSources,
    decimalsKnown: s.decimalsKnown,
    variations: s.variation === null ? {} : { "1h": s.variation },
  });
  return { kind: "onchain", target: s.target, result: { ok: true, value }, observedAtMs: nowMs };
}

/** The checkpoint as the daemon reads it at start: every checkpoint the engine exports must import. */
function recover(checkpoint: unknown, exact: boolean): MonitorState {
  return importAlertState(parsePersistedAlertState(checkpoint), { exact });
}

/** Run one input sequence on a fresh state; the transitions in order and the active alerts at the end. */
function run(
  initialRules: readonly RuleConfig[],
  inputs: readonly (readonly [Input, number])[],
  exact: boolean,
): { transitions: AlertPayload[]; active: readonly AlertPayload[] } {
  let state: MonitorState = createMonitorState({ exact });
  let rules = initialRules;
  const transitions: AlertPayload[] = [];
  // what a restart recovers: the last checkpoint, and the transitions journaled after it
  let checkpoint: unknown = JSON.parse(JSON.stringify(exportAlertState(state)));
  let journal: AlertPayload[] = [];
  const apply = (evaluation: Evaluation): void => {
    state = evaluation.state;
    transitions.push(...evaluation.transitions);
    journal.push(...evaluation.transitions);
  };
  for (const [input, nowMs] of inputs) {
    if (input.kind === "observe")
      for (const observation of input.observations)
        apply(observe(state, observation, rules, observation.observedAtMs));
    else if (input.kind === "tick") apply(tick(state, rules, nowMs));
    else if (input.kind === "retain") apply(retainTargets(state, input.ids, rules, nowMs, TARGETS));
    else if (input.kind === "checkpoint") {
      checkpoint = JSON.parse(JSON.stringify(exportAlertState(state)));
      journal = [];
    } else if (input.kind === "restart") {
      // targets are forgotten; journaled alerts come back without their targets (they learn them from data)
      state = restoreAnnounced(recover(checkpoint, exact), journal);
      apply(retainTargets(state, new Set(TARGETS.map((t) => t.id)), rules, nowMs, TARGETS));
    } else {
      // a config reload: the runner swaps the rules array and retains the configured targets
      rules = input.rules;
      apply(retainTargets(state, new Set(TARGETS.map((t) => t.id)), rules, nowMs, TARGETS));
    }
  }
  return { transitions, active: activeAlerts(state) };
}

describe("fast path = exact path", () => {
  it("same transitions and active alerts for random observations, ticks, reloads and restarts", () => {
    fc.assert(
      fc.property(rulesArray, fc.array(fc.tuple(step, stepMs), { maxLength: 80 }), (rules, steps) => {
        const prices = new Map<string, number>();
        let nowMs = T0;
        const inputs = steps.map(([s, dtMs]) => {
          nowMs += dtMs + (s.kind === "price" ? (s.polls - 1) * 1_000 : 0);
          return [toInput(s, nowMs, prices), nowMs] as const;
        });
        const fast = run(rules, inputs, false);
        const exact = run(rules, inputs, true);
        expect(fast.transitions).toEqual(exact.transitions);
        expect(fast.active).toEqual(exact.active);
      }),
      { numRuns: 1_000 },
    );
  });
});
