// vault_status: a vault that is not `live` or whose deposits are paused.
import { booleanMeasure, noData } from "../finding.js";
import { toIso } from "../format.js";
import type { RuleCommon } from "./common.js";
import { defineRule } from "./definition.js";

/** Vault status not `live`, or deposits paused. */
export interface VaultStatusRule extends RuleCommon {
  readonly kind: "vault_status";
}

const NO_DATA = noData("no vault data");

/** vault_status on vault targets: value 1 when status ≠ live or deposits are paused, else 0. */
export const vaultStatus = defineRule<VaultStatusRule>({
  appliesTo: (_rule, target) => target.kind === "vault",
  keys: "one",
  detect({ target, scopeKey, settings }) {
    const snapshot = target.snapshot;
    if (snapshot?.kind !== "vault") return NO_DATA;
    const { status, depositConstraints, name } = snapshot.value;
    // Deposits the server says nothing about are unknown: the status alone decides, and the text says so.
    const paused = depositConstraints.paused;
    const active = status !== "live" || paused === true;
    const deposits = paused === null ? "deposits unknown" : paused ? "deposits paused" : "deposits open";
    const observedAtMs = target.observedAtMs;
    return [
      booleanMeasure({
        subKey: "",
        scopeKey,
        extraLabels: null,
        active,
        severity: settings.severity,
        describe: () => ({
          summary: `vault ${name === null || name === "" ? scopeKey : name} is ${status}, ${deposits}`,
          context: { status, depositsPaused: paused, observedAt: toIso(observedAtMs) },
        }),
      }),
    ];
  },
});
