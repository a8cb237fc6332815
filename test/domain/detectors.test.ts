// Table-driven detector tests through the monitor API: boundaries, bad inputs, overrides and filters.
import { describe, expect, it } from "vitest";
import { createMonitorState, observe, tick, type Observation } from "../../src/domain/monitor.js";
import type { RuleConfig } from "../../src/domain/rules/index.js";
import {
  BTC_OFF,
  BTC_ON,
  ETH_OFF,
  T0,
  entrySet,
  fundingRates,
  obs,
  pairPrice,
  publisher,
  rule,
  vault,
} from "./helpers.js";

interface Case {
  readonly name: string;
  readonly rules: readonly RuleConfig[];
  readonly steps: readonly { readonly at: number; readonly o?: Observation }[];
  /** Expected firing alerts after the last step: [rule, value] (value rounded to 6 places), or [] for none. */
  readonly firing: readonly (readonly [string, number | null])[];
}

function run(c: Case): readonly (readonly [string, number | null])[] {
  let state = createMonitorState();
  const firing = new Map<string, readonly [string, number | null]>();
  for (const step of c.steps) {
    const evaluation =
      step.o === undefined ? tick(state, c.rules, step.at) : observe(state, step.o, c.rules, step.at);
    state = evaluation.state;
    for (const t of evaluation.transitions) {
      if (t.status === "firing")
        firing.set(t.fingerprint, [t.rule, t.value === null ? null : Math.round(t.value * 1e6) / 1e6]);
      else firing.delete(t.fingerprint);
    }
  }
  return [...firing.values()];
}

const pc = (threshold: number, extra: Parameters<typeof rule>[2] = {}) =>
  rule("price_change", { windowMs: 60_000, market: "offchain" }, { threshold, ...extra });
const offAt = (price: string, at: number, comps: readonly (readonly [string, string])[] = []) => ({
  at,
  o: obs.off(pairPrice(price, at, comps), at),
});

const cases: Case[] = [
  {
    name: "price_change exactly at threshold fires",
    rules: [pc(0.02)],
    steps: [offAt("100", T0), offAt("102", T0 + 60_000)],
    firing: [["price_change", 0.02]],
  },
  {
    name: "price_change just below threshold stays quiet",
    rules: [pc(0.02)],
    steps: [offAt("100", T0), offAt("101.99", T0 + 60_000)],
    firing: [],
  },
  {
    name: "price_change negative move fires on magnitude",
    rules: [pc(0.02)],
    steps: [offAt("100", T0), offAt("97", T0 + 60_000)],
    firing: [["price_change", -0.03]],
  },
  {
    name: "price_change without enough history is no data",
    rules: [pc(0.02)],
    steps: [offAt("100", T0), offAt("150", T0 + 30_000)],
    firing: [],
  },
  {
    name: "price_change uses the point at/just before now−window",
    rules: [pc(0.02)],
    steps: [offAt("100", T0), offAt("104", T0 + 10_000), offAt("105", T0 + 61_000)],
    firing: [["price_change", 0.05]],
  },
  {
    name: "price_change warm-up history counts (within the window tolerance)",
    rules: [pc(0.02)],
    steps: [
      {
        at: T0,
        o: {
          kind: "history",
          target: BTC_OFF,
          points: [{ atMs: T0 - 65_000, price: pairPrice("100", 0).price }],
        },
      },
      offAt("110", T0),
    ],
    firing: [["price_change", 0.1]],
  },
  {
    name: "price_change per-pair override replaces threshold",
    rules: [pc(0.02, { overrides: { "BTC/USD": { threshold: 0.5 } } })],
    steps: [offAt("100", T0), offAt("110", T0 + 60_000)],
    firing: [],
  },
  {
    name: "price_change pairs filter excludes other pairs",
    rules: [pc(0.02, { pairs: ["ETH/USD"] })],
    steps: [offAt("100", T0), offAt("110", T0 + 60_000)],
    firing: [],
  },
  {
    name: "price_change pairs filter includes listed pair",
    rules: [pc(0.02, { pairs: ["ETH/USD"] })],
    steps: [
      { at: T0, o: obs.off(pairPrice("100", T0), T0, ETH_OFF) },
      { at: T0 + 60_000, o: obs.off(pairPrice("110", T0 + 60_000), T0 + 60_000, ETH_OFF) },
    ],
    firing: [["price_change", 0.1]],
  },
  {
    name: "price_change zero reference price is no data",
    rules: [pc(0.02)],
    steps: [offAt("0", T0), offAt("100", T0 + 60_000)],
    firing: [],
  },
  {
    name: "price_level above at exactly the level fires",
    rules: [rule("price_level", { direction: "above", market: "offchain" }, { threshold: 100000.1 })],
    steps: [offAt("100000.1", T0)],
    firing: [["price_level", 100000.1]],
  },
  {
    name: "price_level above just below the level stays quiet",
    rules: [rule("price_level", { direction: "above", market: "offchain" }, { threshold: 100000.1 })],
    steps: [offAt("100000.099999999999999999", T0)],
    firing: [],
  },
  {
    name: "price_level below fires at or under the level",
    rules: [rule("price_level", { direction: "below", market: "offchain" }, { threshold: 0.1 })],
    steps: [offAt("0.1", T0)],
    firing: [["price_level", 0.1]],
  },
  {
    name: "price_level tiny level in exponent notation compares exactly",
    rules: [rule("price_level", { direction: "below", market: "offchain" }, { threshold: 1e-7 })],
    steps: [offAt("0.000000100000000001", T0)],
    firing: [],
  },
  {
    name: "stale_price exactly at threshold fires on tick",
    rules: [rule("stale_price", { market: "offchain" }, { threshold: 60_000 })],
    steps: [offAt("100", T0), { at: T0 + 60_000 }],
    firing: [["stale_price", 60_000]],
  },
  {
    name: "stale_price just below threshold stays quiet",
    rules: [rule("stale_price", { market: "offchain" }, { threshold: 60_000 })],
    steps: [offAt("100", T0), { at: T0 + 59_999 }],
    firing: [],
  },
  {
    name: "stale_price age comes from the price timestamp",
    rules: [rule("stale_price", { market: "offchain" }, { threshold: 60_000 })],
    steps: [{ at: T0, o: obs.off(pairPrice("100", T0 - 70_000), T0) }],
    firing: [["stale_price", 70_000]],
  },
  {
    name: "low_sources fires at the threshold",
    rules: [rule("low_sources", { market: "offchain" }, { threshold: 3 })],
    steps: [{ at: T0, o: obs.off(pairPrice("100", T0, [], 3), T0) }],
    firing: [["low_sources", 3]],
  },
  {
    name: "low_sources above the threshold stays quiet",
    rules: [rule("low_sources", { market: "offchain" }, { threshold: 3 })],
    steps: [{ at: T0, o: obs.off(pairPrice("100", T0, [], 4), T0) }],
    firing: [],
  },
  {
    name: "component_deviation flags the deviating source only",
    rules: [rule("component_deviation", { market: "offchain" }, { threshold: 0.01 })],
    steps: [
      offAt("100", T0, [
        ["BINANCE", "100.5"],
        ["OKX", "101"],
      ]),
    ],
    firing: [["component_deviation", 0.01]],
  },
  {
    name: "component_deviation with no components is no data",
    rules: [rule("component_deviation", { market: "offchain" }, { threshold: 0.01 })],
    steps: [offAt("100", T0)],
    firing: [],
  },
  {
    name: "component_deviation on-chain with unknown decimals is no data",
    rules: [rule("component_deviation", { market: "onchain" }, { threshold: 0.01 })],
    steps: [{ at: T0, o: obs.on(entrySet("100", T0, [["AVNU", "150"]], { decimalsKnown: false }), T0) }],
    firing: [],
  },
  {
    name: "component_deviation on-chain per publisher",
    rules: [rule("component_deviation", { market: "onchain" }, { threshold: 0.01 })],
    steps: [
      {
        at: T0,
        o: obs.on(
          entrySet("100", T0, [
            ["AVNU", "98"],
            ["PRAGMA", "100"],
          ]),
          T0,
        ),
      },
    ],
    firing: [["component_deviation", -0.02]],
  },
  {
    name: "variation fires on |variation|",
    rules: [rule("variation", { window: "1h" }, { threshold: 0.05 })],
    steps: [{ at: T0, o: obs.on(entrySet("100", T0, [], { variations: { "1h": -0.06 } }), T0) }],
    firing: [["variation", -0.06]],
  },
  {
    name: "variation absent window is no data",
    rules: [rule("variation", { window: "1d" }, { threshold: 0.05 })],
    steps: [{ at: T0, o: obs.on(entrySet("100", T0, [], { variations: { "1h": 0.5 } }), T0) }],
    firing: [],
  },
  {
    name: "onchain_offchain_deviation fires when both fresh",
    rules: [rule("onchain_offchain_deviation", { maxAgeMs: 120_000 }, { threshold: 0.01 })],
    steps: [offAt("100", T0), { at: T0 + 1000, o: obs.on(entrySet("102", T0), T0 + 1000) }],
    firing: [["onchain_offchain_deviation", 0.02]],
  },
  {
    name: "onchain_offchain_deviation with a stale side is no data",
    rules: [rule("onchain_offchain_deviation", { maxAgeMs: 120_000 }, { threshold: 0.01 })],
    steps: [offAt("100", T0 - 120_000), { at: T0, o: obs.on(entrySet("102", T0), T0) }],
    firing: [],
  },
  {
    name: "publisher_stale whole publisher and per feed",
    rules: [rule("publisher_stale", { perFeed: true }, { threshold: 600_000 })],
    steps: [
      {
        at: T0,
        o: obs.pubs(
          [
            publisher("AVNU", T0 - 10_000, [
              ["BTC/USD", T0 - 600_000],
              ["ETH/USD", T0],
            ]),
            publisher("PRAGMA", T0 - 600_000),
          ],
          T0,
        ),
      },
    ],
    firing: [
      ["publisher_stale", 600_000],
      ["publisher_stale", 600_000],
    ],
  },
  {
    name: "publisher_stale pairs filter matches publisher names",
    rules: [rule("publisher_stale", { perFeed: false }, { threshold: 600_000, pairs: ["AVNU"] })],
    steps: [{ at: T0, o: obs.pubs([publisher("AVNU", T0), publisher("PRAGMA", T0 - 900_000)], T0) }],
    firing: [],
  },
  {
    name: "publisher_stale per-publisher override",
    rules: [
      rule(
        "publisher_stale",
        { perFeed: false },
        { threshold: 600_000, overrides: { PRAGMA: { threshold: 1_000_000 } } },
      ),
    ],
    steps: [{ at: T0, o: obs.pubs([publisher("PRAGMA", T0 - 900_000)], T0) }],
    firing: [],
  },
  {
    name: "publisher_stale: a publisher without a timestamp (no component) is no data, not stale",
    rules: [rule("publisher_stale", { perFeed: false }, { threshold: 600_000 })],
    steps: [{ at: T0, o: obs.pubs([publisher("KAIKO", null), publisher("PRAGMA", T0 - 600_000)], T0) }],
    firing: [["publisher_stale", 600_000]],
  },
  {
    name: "publisher_missing from the publisher list",
    rules: [rule("publisher_missing", { publishers: ["AVNU", "KAIKO"] }, {})],
    steps: [{ at: T0, o: obs.pubs([publisher("AVNU", T0)], T0) }],
    firing: [["publisher_missing", 1]],
  },
  {
    name: "publisher_missing from entry components",
    rules: [rule("publisher_missing", { publishers: ["KAIKO"] }, {})],
    steps: [{ at: T0, o: obs.on(entrySet("100", T0, [["AVNU", "100"]]), T0) }],
    firing: [["publisher_missing", 1]],
  },
  {
    name: "publisher_missing empty components is no data",
    rules: [rule("publisher_missing", { publishers: ["KAIKO"] }, {})],
    steps: [{ at: T0, o: obs.on(entrySet("100", T0), T0) }],
    firing: [],
  },
  {
    name: "funding_rate at threshold fires (latest rate)",
    rules: [rule("funding_rate", {}, { threshold: 0.001 })],
    steps: [{ at: T0, o: obs.funding(fundingRates(-0.001, T0), T0) }],
    firing: [["funding_rate", -0.001]],
  },
  {
    name: "funding_rate just below stays quiet",
    rules: [rule("funding_rate", {}, { threshold: 0.001 })],
    steps: [{ at: T0, o: obs.funding(fundingRates(0.000999, T0), T0) }],
    firing: [],
  },
  {
    name: "funding_rate empty page is no data",
    rules: [rule("funding_rate", {}, { threshold: 0.001 })],
    steps: [{ at: T0, o: obs.funding([], T0) }],
    firing: [],
  },
  {
    name: "vault_status paused deposits fire",
    rules: [rule("vault_status", {}, {})],
    steps: [{ at: T0, o: obs.vault(vault("live", true, "1"), T0) }],
    firing: [["vault_status", 1]],
  },
  {
    name: "vault_status retired fires",
    rules: [rule("vault_status", {}, {})],
    steps: [{ at: T0, o: obs.vault(vault("retired", false, "1"), T0) }],
    firing: [["vault_status", 1]],
  },
  {
    name: "vault_status live and open is quiet",
    rules: [rule("vault_status", {}, {})],
    steps: [{ at: T0, o: obs.vault(vault("live", false, "1"), T0) }],
    firing: [],
  },
  {
    name: "vault_status deposits unknown (paused null) on a live vault is quiet",
    rules: [rule("vault_status", {}, {})],
    steps: [{ at: T0, o: obs.vault(vault("live", null, "1"), T0) }],
    firing: [],
  },
  {
    name: "vault_status deposits unknown on a paused vault fires",
    rules: [rule("vault_status", {}, {})],
    steps: [{ at: T0, o: obs.vault(vault("paused", null, "1"), T0) }],
    firing: [["vault_status", 1]],
  },
  {
    name: "vault_share_price drop at threshold fires",
    rules: [rule("vault_share_price", { windowMs: 3_600_000 }, { threshold: 0.01 })],
    steps: [
      { at: T0, o: obs.vault(vault("live", false, "1.000000"), T0) },
      { at: T0 + 3_600_000, o: obs.vault(vault("live", false, "0.99"), T0 + 3_600_000) },
    ],
    firing: [["vault_share_price", 0.01]],
  },
  {
    name: "vault_share_price rise is quiet",
    rules: [rule("vault_share_price", { windowMs: 3_600_000 }, { threshold: 0.01 })],
    steps: [
      { at: T0, o: obs.vault(vault("live", false, "1"), T0) },
      { at: T0 + 3_600_000, o: obs.vault(vault("live", false, "1.5"), T0 + 3_600_000) },
    ],
    firing: [],
  },
  {
    name: "upstream_error fires at threshold consecutive failures",
    rules: [rule("upstream_error", {}, { threshold: 3 })],
    steps: [
      { at: T0, o: obs.offFail(T0) },
      { at: T0 + 1, o: obs.offFail(T0 + 1) },
      { at: T0 + 2, o: obs.offFail(T0 + 2) },
    ],
    firing: [["upstream_error", 3]],
  },
  {
    name: "upstream_error below threshold stays quiet",
    rules: [rule("upstream_error", {}, { threshold: 3 })],
    steps: [
      { at: T0, o: obs.offFail(T0) },
      { at: T0 + 1, o: obs.offFail(T0 + 1) },
    ],
    firing: [],
  },
  {
    name: "upstream_error count restarts after a success",
    rules: [rule("upstream_error", {}, { threshold: 2 })],
    steps: [{ at: T0, o: obs.offFail(T0) }, offAt("1", T0 + 1), { at: T0 + 2, o: obs.offFail(T0 + 2) }],
    firing: [],
  },
  {
    name: "a failed poll yields no verdict for price rules",
    rules: [rule("low_sources", { market: "offchain" }, { threshold: 3 })],
    steps: [{ at: T0, o: obs.offFail(T0) }],
    firing: [],
  },
  {
    name: "disabled rules never fire",
    rules: [pc(0.02, { enabled: false })],
    steps: [offAt("100", T0), offAt("110", T0 + 60_000)],
    firing: [],
  },
  {
    name: "rules of the other market do not apply",
    rules: [rule("low_sources", { market: "onchain" }, { threshold: 3 })],
    steps: [{ at: T0, o: obs.off(pairPrice("100", T0, [], 1), T0) }],
    firing: [],
  },
];

describe("detectors", () => {
  it.each(cases)("$name", (c) => {
    expect(run(c)).toEqual(c.firing);
  });

  it("on-chain price with unknown decimals gives no price verdict", () => {
    const rules = [rule("price_level", { direction: "above", market: "onchain" }, { threshold: 1 })];
    const state = createMonitorState();
    const e = observe(state, obs.on(entrySet("100", T0, [], { decimalsKnown: false }), T0), rules, T0);
    expect(e.transitions).toEqual([]);
  });

  it("alert payload follows DESIGN §3", () => {
    const rules = [pc(0.02, { severity: "critical" })];
    const state = createMonitorState();
    observe(state, obs.off(pairPrice("82069.27", T0), T0), rules, T0);
    const at = T0 + 60_000;
    const { transitions } = observe(state, obs.off(pairPrice("86184.12", at), at), rules, at);
    expect(transitions).toHaveLength(1);
    const alert = transitions[0]!;
    expect(alert).toMatchObject({
      status: "firing",
      rule: "price_change",
      severity: "critical",
      labels: { pair: "BTC/USD", market: "offchain", entry_type: "spot", window: "1min" },
      summary: "BTC/USD moved +5.01% in 1min (threshold 2%)",
      threshold: 0.02,
      startsAt: new Date(at).toISOString(),
      endsAt: null,
      reason: "first",
      context: { price: "86184.12", previous: "82069.27", observedAt: new Date(at).toISOString() },
    });
    expect(alert.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(alert.value).toBeCloseTo(0.05014, 5);
  });

  it("adds rule_id only when the id differs from the kind", () => {
    const rules = [pc(0.02, { id: "btc-fast" })];
    const state = createMonitorState();
    observe(state, obs.off(pairPrice("100", T0), T0), rules, T0);
    const { transitions } = observe(
      state,
      obs.off(pairPrice("110", T0 + 60_000), T0 + 60_000),
      rules,
      T0 + 60_000,
    );
    expect(transitions[0]?.labels).toMatchObject({ rule_id: "btc-fast" });
  });

  it("upstream_error carries endpoint label and last error context", () => {
    const rules = [rule("upstream_error", {}, { threshold: 1 })];
    const { transitions } = observe(createMonitorState(), obs.offFail(T0, BTC_OFF, "503 down"), rules, T0);
    expect(transitions[0]).toMatchObject({
      labels: { endpoint: BTC_OFF.id, pair: "BTC/USD" },
      context: { lastErrorCode: "PM_ERR_UPSTREAM_HTTP", lastErrorMessage: "503 down", failures: 1 },
    });
  });

  it.each([
    { decimalsKnown: true, price: "999870", unknown: false },
    { decimalsKnown: false, price: null, unknown: true },
  ])(
    "variation with decimals known $decimalsKnown shows price $price",
    ({ decimalsKnown, price, unknown }) => {
      const rules = [rule("variation", { window: "1h" }, { threshold: 0.05 })];
      // decimals 0: the raw integer 999870 is no price, whatever scale it is read with
      const set = { ...entrySet("999870", T0, [], { variations: { "1h": 0.06 } }), decimalsKnown };
      const { transitions } = observe(createMonitorState(), obs.on(set, T0), rules, T0);
      expect(transitions[0]?.context).toMatchObject({ price });
      expect(transitions[0]?.summary.includes("price unknown")).toBe(unknown);
    },
  );

  it("onchain_offchain_deviation reports both ages", () => {
    const rules = [rule("onchain_offchain_deviation", { maxAgeMs: 120_000 }, { threshold: 0.01 })];
    const state = createMonitorState();
    observe(state, obs.off(pairPrice("100", T0), T0), rules, T0);
    const { transitions } = observe(state, obs.on(entrySet("90", T0 - 5000), T0 + 1000), rules, T0 + 1000);
    expect(transitions[0]).toMatchObject({
      labels: { pair: "BTC/USD", network: BTC_ON.network },
      context: { onchainAgeMs: 6000, offchainAgeMs: 1000, onchainPrice: "90", offchainPrice: "100" },
    });
  });
});
