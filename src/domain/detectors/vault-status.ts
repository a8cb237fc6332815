// vault_status: a vault that is not `live` or whose deposits are paused.
import { toIso } from "../format.js";
import { settingsFor, targetScopeKey } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import { booleanMeasure, noData, type Finding, type RuleOf } from "./finding.js";

/** Value 1 when status ≠ live or deposits are paused, else 0. */
export function detectVaultStatus(
  data: TargetData,
  rule: RuleOf<"vault_status">,
  _nowMs: number,
): readonly Finding[] {
  const snapshot = data.snapshot;
  if (snapshot?.kind !== "vault") return noData("no vault data");
  const { status, depositConstraints, name } = snapshot.value;
  // Deposits the server says nothing about are unknown: the status alone decides, and the text says so.
  const paused = depositConstraints.paused;
  const active = status !== "live" || paused === true;
  const deposits = paused === null ? "deposits unknown" : paused ? "deposits paused" : "deposits open";
  const key = targetScopeKey(data.spec);
  const observedAtMs = data.observedAtMs;
  return [
    booleanMeasure({
      subKey: "",
      scopeKey: key,
      extraLabels: null,
      active,
      severity: settingsFor(rule, key).severity,
      describe: () => ({
        summary: `vault ${name === null || name === "" ? key : name} is ${status}, ${deposits}`,
        context: { status, depositsPaused: paused, observedAt: toIso(observedAtMs) },
      }),
    }),
  ];
}
