// upstream_error: a target whose polls failed too many times in a row; resolves on the first success.
import type { AlertLabels } from "../events.js";
import type { Measure } from "../finding.js";
import { toIso } from "../format.js";
import { inScope, targetScopeKey } from "../rule-scope.js";
import type { TargetSpec } from "../types.js";
import type { RuleCommon } from "./common.js";
import { defineRule } from "./definition.js";

/** Target failed ≥ threshold consecutive polls. */
export interface UpstreamErrorRule extends RuleCommon {
  readonly kind: "upstream_error";
}

/** Labels an upstream_error alert carries: the endpoint (target id) plus pair / network / vault. */
export function upstreamLabels(target: TargetSpec): AlertLabels {
  switch (target.kind) {
    case "offchain":
      return { endpoint: target.id, pair: target.pair, market: "offchain" };
    case "onchain":
      return { endpoint: target.id, pair: target.pair, market: "onchain", network: target.network };
    case "publishers":
      return { endpoint: target.id, network: target.network };
    case "funding":
      return { endpoint: target.id, pair: target.pair, source: target.source };
    case "vault":
      return { endpoint: target.id, vault: target.vaultId };
  }
}

/** upstream_error on every target: failures ≥ max(1, threshold) fires; zero failures (a success) clears, whatever the clear threshold. */
export const upstreamError = defineRule<UpstreamErrorRule>({
  // its alerts name their target: the endpoint label is the target id
  restoredKey: (labels) => {
    const endpoint = labels["endpoint"];
    return { scopeKey: "", targetIds: endpoint === undefined ? [] : [endpoint] };
  },
  appliesTo: () => true,
  // Overridden per target id, or per pair / vault like the others.
  scopeKey: (rule, target) => (Object.hasOwn(rule.overrides, target.id) ? target.id : targetScopeKey(target)),
  // The filter matches the target id, its pair, vault id or network.
  coversTarget: (rule, target) => inScope(rule, target.id) || inScope(rule, targetScopeKey(target)),
  targetLabels: upstreamLabels,
  runsOnFailure: true,
  inhibits: true,
  keys: "one",
  detect({ target, scopeKey, settings }) {
    const threshold = Math.max(1, settings.threshold);
    const failures = target.failures;
    const error = target.lastError;
    const failingSinceMs = target.failingSinceMs;
    const endpoint = target.spec.id;
    const measure: Measure = {
      kind: "measure",
      subKey: "",
      scopeKey,
      extraLabels: null,
      value: failures,
      threshold,
      severity: settings.severity,
      fires: failures >= threshold,
      clears: failures === 0,
      relatedTargetId: null,
      describe: () => ({
        summary:
          error === null
            ? `${endpoint} polls succeed again`
            : `${endpoint} failed ${failures} consecutive polls (${error.code}: ${error.message})`,
        context: {
          failures,
          lastErrorCode: error?.code ?? null,
          lastErrorMessage: error?.message ?? null,
          failingSince: error === null ? null : toIso(failingSinceMs),
        },
      }),
    };
    return [measure];
  },
  calm: ({ target, settings }) => target.failures < Math.max(1, settings.threshold),
});
