// upstream_error: a target whose polls failed too many times in a row; resolves on the first success.
import { toIso } from "../format.js";
import { settingsFor, upstreamOverrideKey, type RuleSettings } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import { NO_FINDINGS, type Finding, type Measure, type QuietKeys, type RuleOf } from "./finding.js";

/** failures ≥ max(1, threshold) fires; zero failures (a success) clears, whatever the clear threshold. */
export function detectUpstreamError(
  data: TargetData,
  rule: RuleOf<"upstream_error">,
  _nowMs: number,
  quiet?: QuietKeys,
): readonly Finding[] {
  const key = quiet === undefined ? upstreamOverrideKey(rule, data.spec) : quiet.scopeKey;
  const settings = quiet === undefined ? settingsFor(rule, key) : quiet.settings;
  const threshold = Math.max(1, settings.threshold);
  const failures = data.failures;
  // A healthy target with no alert record: nothing to report, nothing allocated.
  if (quiet !== undefined && failures < threshold && quiet.isQuiet("")) return NO_FINDINGS;
  return [upstreamMeasure(key, settings, threshold, failures, data)];
}

// The measure and its lazy description, outside the detector so its quiet path allocates no closure
// context (see staleMeasure in stale-price.ts).
function upstreamMeasure(
  key: string,
  settings: RuleSettings,
  threshold: number,
  failures: number,
  data: TargetData,
): Measure {
  const error = data.lastError;
  const failingSinceMs = data.failingSinceMs;
  const endpoint = data.spec.id;
  return {
    kind: "measure",
    subKey: "",
    scopeKey: key,
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
}
