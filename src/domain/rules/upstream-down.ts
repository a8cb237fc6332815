// upstream_down: most targets failing with the same kind of error at once; the per-target upstream_error alerts are its children.
import type { PmError } from "../errors.js";
import { errorCode } from "../errors.js";
import { toIso } from "../format.js";
import { settingsFor } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import { causeMeasure, enoughMembers, listMembers } from "./cause.js";
import type { RuleCommon } from "./common.js";
import { defineRule, type CauseContext, type CauseFinding } from "./definition.js";

/** ≥ threshold targets (and ≥ minFraction of the judged ones) failing with one kind of error. */
export interface UpstreamDownRule extends RuleCommon {
  readonly kind: "upstream_down";
  /** Fraction of the judged targets (failing, not polled yet, or polled fine within windowMs) that must fail; 0 = the count alone. */
  readonly minFraction: number;
  /** A healthy target counts against the cause only when its latest poll is this recent (ms). */
  readonly windowMs: number;
}

/** The kind of an upstream error as the summary names it: `HTTP 500`, an errno code (`ECONNREFUSED`), else its code. */
export function errorKind(error: PmError): string {
  const status = error.details?.status;
  if (status !== undefined) return `HTTP ${status}`;
  let cause: unknown = error.cause;
  for (let depth = 0; depth < 4 && cause !== undefined && cause !== null; depth++) {
    const code = errorCode(cause);
    if (code !== undefined && /^E[A-Z]+$/.test(code)) return code;
    cause = (cause as { cause?: unknown }).cause;
  }
  return error.code;
}

/** The targets failing with one kind of error. */
interface FailingGroup {
  readonly kind: string;
  readonly targets: TargetData[];
  readonly network: boolean;
}

/**
 * Failing targets by error kind, and how many targets are judged: failing, polled fine within the window, or
 * configured and not polled yet (at startup the first few answers, timeouts of a loaded machine, say, are not
 * "most targets").
 */
function failingGroups(rule: UpstreamDownRule, targets: ReadonlyMap<string, TargetData>, nowMs: number) {
  const groups = new Map<string, FailingGroup>();
  let judged = 0;
  for (const data of targets.values()) {
    const error = data.lastError;
    if (data.failures > 0 && error !== null) {
      judged++;
      const kind = errorKind(error);
      const group = groups.get(kind);
      if (group === undefined)
        groups.set(kind, { kind, targets: [data], network: error.code === "PM_ERR_UPSTREAM_NETWORK" });
      else group.targets.push(data);
    } else if (
      data.failures === 0 &&
      (Number.isNaN(data.lastPollAtMs) || nowMs - data.lastPollAtMs <= rule.windowMs)
    )
      judged++;
  }
  return { groups, judged };
}

/** The largest group (ties: the kind first in text order); null when nothing fails. */
function largest(groups: ReadonlyMap<string, FailingGroup>): FailingGroup | null {
  let best: FailingGroup | null = null;
  for (const group of groups.values())
    if (
      best === null ||
      group.targets.length > best.targets.length ||
      (group.targets.length === best.targets.length && group.kind < best.kind)
    )
      best = group;
  return best;
}

/** The verdict of the one upstream_down key: the largest failing group against the threshold and fraction. */
function evaluate({ rule, alerts, targets, nowMs }: CauseContext<UpstreamDownRule>): readonly CauseFinding[] {
  const settings = settingsFor(rule, "", "above");
  const { groups, judged } = failingGroups(rule, targets, nowMs);
  const group = largest(groups);
  const count = group?.targets.length ?? 0;
  const ids = (group?.targets ?? []).map((data) => data.spec.id).sort();
  const sinceMs = Math.min(...(group?.targets ?? []).map((data) => data.failingSinceMs));
  const failing = new Set(ids);
  const children: string[] = [];
  for (const record of alerts.values())
    if (
      record.ruleKind === "upstream_error" &&
      record.status !== "inactive" &&
      failing.has(record.targetIds[0] ?? "")
    )
      children.push(record.fingerprint);
  const measure = causeMeasure({
    key: "",
    labels: {},
    count,
    fires: enoughMembers(count, settings.threshold, rule.minFraction, judged),
    settings,
    describe: () => ({
      summary:
        group === null
          ? "Pragma API answers again: no target failing"
          : `Pragma API ${group.network ? "unreachable" : "failing"} (${group.kind}): ${count} of ${judged} targets failing since ${toIso(sinceMs).slice(11, 19)}`,
      context: {
        errorKind: group?.kind ?? null,
        failing: count,
        judged,
        failingSince: group === null ? null : toIso(sinceMs),
        targets: listMembers(ids),
      },
    }),
  });
  return [{ measure, children }];
}

/** upstream_down: a cause rule over every target's poll outcome, adopting their upstream_error alerts. */
export const upstreamDown = defineRule<UpstreamDownRule>({
  appliesTo: () => false,
  keys: "many",
  detect: () => [],
  cause: { evaluate },
});
