// Alerts whose target or rule left the config resolve with a summary and context.resolvedBy that say so.
import { describe, expect, it } from "vitest";
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
} from "../../src/domain/monitor.js";
import type { RuleConfig } from "../../src/domain/rules/index.js";
import type { TargetSpec } from "../../src/domain/types.js";
import { BTC_OFF, BTC_ON, ETH_OFF, T0, VAULT, entrySet, obs, pairPrice, rule, vault } from "./helpers.js";
import { parsePersistedAlertState } from "../../src/state/alert-checkpoint.js";

const vaultRule = rule("vault_status", {}, {});
const lowRule = rule("low_sources", { market: "offchain" }, { threshold: 3 });
const devRule = rule("onchain_offchain_deviation", { maxAgeMs: 120_000 }, { threshold: 0.01 });

/** The firing payloads a fresh monitor announces for the demo-like alerts: a paused vault, BTC low sources, a BTC deviation. */
function announced(): AlertPayload[] {
  const state = createMonitorState();
  const rules: RuleConfig[] = [vaultRule, lowRule, devRule];
  return [
    ...observe(state, obs.vault(vault("live", true, "1"), T0), rules, T0).transitions,
    ...observe(state, obs.off(pairPrice("100", T0, [], 2), T0), rules, T0).transitions,
    ...observe(state, obs.on(entrySet("90", T0), T0), rules, T0).transitions,
  ];
}

const OTHER_VAULT: TargetSpec = { kind: "vault", id: "vault:v2", vaultId: "v2" };

describe("alerts restored from the journal (targets not known yet) against the configured targets", () => {
  const cases: readonly { name: string; specs: readonly TargetSpec[]; resolved: readonly string[] }[] = [
    {
      name: "every target still configured: nothing resolves",
      specs: [VAULT, BTC_OFF, BTC_ON],
      resolved: [],
    },
    {
      name: "the production example (no vault): the vault alert resolves",
      specs: [BTC_OFF, BTC_ON, ETH_OFF],
      resolved: ["vault_status"],
    },
    {
      name: "another vault does not own it",
      specs: [OTHER_VAULT, BTC_OFF, BTC_ON],
      resolved: ["vault_status"],
    },
    {
      name: "BTC off-chain gone: its low_sources resolves; the on-chain target still owns the deviation",
      specs: [VAULT, BTC_ON, ETH_OFF],
      resolved: ["low_sources"],
    },
    {
      name: "nothing configured: all resolve",
      specs: [],
      resolved: ["vault_status", "low_sources", "onchain_offchain_deviation"],
    },
  ];
  it.each(cases)("$name", ({ specs, resolved }) => {
    const state = restoreAnnounced(createMonitorState(), announced());
    expect(activeAlerts(state)).toHaveLength(3);
    const ids = new Set(specs.map((s) => s.id));
    const { transitions } = retainTargets(state, ids, [vaultRule, lowRule, devRule], T0 + 5_000, specs);
    expect(transitions.map((t) => t.rule)).toEqual(resolved);
    for (const t of transitions) {
      expect(t).toMatchObject({ status: "resolved", context: { resolvedBy: "target_removed" } });
      expect(t.summary).toMatch(
        /^No longer monitored: its target was removed from the config \(last state: /,
      );
    }
    expect(activeAlerts(state)).toHaveLength(3 - resolved.length);
  });

  it("without the configured targets (an older caller) they are kept", () => {
    const state = restoreAnnounced(createMonitorState(), announced());
    expect(retainTargets(state, new Set(), [vaultRule, lowRule, devRule], T0).transitions).toEqual([]);
  });
});

describe("resolve summaries say why", () => {
  it("a checkpointed alert of a removed target: 'its target was removed', the last state kept as such", () => {
    const state = createMonitorState();
    const fired = observe(state, obs.vault(vault("live", true, "1"), T0), [vaultRule], T0).transitions;
    const restored = importAlertState(
      parsePersistedAlertState(JSON.parse(JSON.stringify(exportAlertState(state)))),
    );
    const { transitions } = retainTargets(restored, new Set(), [], T0 + 1_000, []);
    expect(transitions).toHaveLength(1);
    expect(transitions[0]).toMatchObject({
      status: "resolved",
      startsAt: fired[0]?.startsAt,
      summary: `No longer monitored: its target was removed from the config (last state: ${fired[0]?.summary})`,
      context: { resolvedBy: "target_removed" },
    });
  });

  it("a rule removed: 'its rule was removed, disabled or no longer covers it'", () => {
    const state = createMonitorState();
    const fired = observe(state, obs.vault(vault("live", true, "1"), T0), [vaultRule], T0).transitions;
    const { transitions } = tick(state, [], T0 + 1_000);
    expect(transitions[0]).toMatchObject({
      summary: `No longer monitored: its rule was removed, disabled or no longer covers it (last state: ${fired[0]?.summary})`,
      context: { resolvedBy: "rule_removed" },
    });
  });

  it("a condition that cleared keeps the detector's own summary", () => {
    const state = createMonitorState();
    observe(state, obs.vault(vault("live", true, "1"), T0), [vaultRule], T0);
    const { transitions } = observe(
      state,
      obs.vault(vault("live", false, "1"), T0 + 1_000),
      [vaultRule],
      T0 + 1_000,
    );
    expect(transitions[0]?.summary).not.toMatch(/No longer monitored/);
    expect(transitions[0]?.context["resolvedBy"]).toBeUndefined();
  });
});
