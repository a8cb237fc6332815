// upstream_down: most targets failing with the same kind of error at once; the per-target upstream_error alerts are its children.
import type { PmError } from "../errors.js";
import { errorCode } from "../errors.js";
import { toIso } from "../format.js";
import type { PeerCauses } from "../cause-summary.js";
import { settingsFor } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import { causeMeasure, enoughMembers, listMembersSorted } from "./cause.js";
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

/** The targets failing with one kind of error: their ids, and since when the earliest fails. */
interface FailingGroup {
  readonly kind: string;
  readonly ids: string[];
  sinceMs: number;
  readonly network: boolean;
}

/**
 * What upstream_down reads of a target's latest poll outcome: its error kind and whether it is a network error while
 * it fails (it fails since the first of them, failingSinceMs), null while it does not. A poll that leaves this as it
 * was moves no upstream_down verdict but by time.
 */
export function failureView(data: TargetData): string | null {
  const error = data.lastError;
  if (data.failures === 0 || error === null) return null;
  return `${errorKind(error)}\u001f${error.code === "PM_ERR_UPSTREAM_NETWORK" ? "network" : ""}`;
}

/** Whether the rule judges a target that does not fail: not polled yet, or polled fine within its window. */
export function judgesHealthy(rule: UpstreamDownRule, data: TargetData, nowMs: number): boolean {
  return (
    data.failures === 0 && (Number.isNaN(data.lastPollAtMs) || nowMs - data.lastPollAtMs <= rule.windowMs)
  );
}

/** Whether this engine polled the target: then its state of it is newer than any peer's (else a peer's counts). */
function polledHere(data: TargetData | undefined): boolean {
  return data !== undefined && !Number.isNaN(data.lastPollAtMs);
}

/**
 * Failing targets by error kind, and how many targets are judged: failing, polled fine within the window, or
 * configured and not polled yet (at startup the first few answers, timeouts of a loaded machine, say, are not
 * "most targets"). The peers' targets count too, each once (PeerCauses), but for those the engine polled (its own
 * state is newer): a target it holds and has not polled yet (just adopted) counts as a peer last summarised it.
 */
function failingGroups(
  rule: UpstreamDownRule,
  targets: ReadonlyMap<string, TargetData>,
  peers: PeerCauses,
  nowMs: number,
) {
  const groups = new Map<string, FailingGroup>();
  const add = (kind: string, id: string, sinceMs: number, network: boolean): void => {
    const group = groups.get(kind);
    if (group === undefined) groups.set(kind, { kind, ids: [id], sinceMs, network });
    else {
      group.ids.push(id);
      group.sinceMs = Math.min(group.sinceMs, sinceMs);
    }
  };
  const unjudged = new Set<string>();
  for (const peer of peers.failing)
    if (!polledHere(targets.get(peer.id))) add(peer.kind, peer.id, peer.sinceMs, peer.network);
  for (const id of peers.unjudged.get(rule.id) ?? []) if (!polledHere(targets.get(id))) unjudged.add(id);
  let held = peers.held.size;
  for (const data of targets.values()) {
    const id = data.spec.id;
    if (!peers.held.has(id)) held++;
    const error = data.lastError;
    if (!polledHere(data) && peers.polled.has(id)) continue;
    if (data.failures > 0 && error !== null)
      add(errorKind(error), id, data.failingSinceMs, error.code === "PM_ERR_UPSTREAM_NETWORK");
    else if (!judgesHealthy(rule, data, nowMs)) unjudged.add(id);
  }
  return { groups, judged: held - unjudged.size };
}

/** The largest group (ties: the kind first in text order); null when nothing fails. */
function largest(groups: ReadonlyMap<string, FailingGroup>): FailingGroup | null {
  let best: FailingGroup | null = null;
  for (const group of groups.values())
    if (
      best === null ||
      group.ids.length > best.ids.length ||
      (group.ids.length === best.ids.length && group.kind < best.kind)
    )
      best = group;
  return best;
}

/** The verdict of the one upstream_down key: the largest failing group against the threshold and fraction. */
function evaluate({
  rule,
  alerts,
  targets,
  peers,
  nowMs,
}: CauseContext<UpstreamDownRule>): readonly CauseFinding[] {
  const settings = settingsFor(rule, "", "above");
  const { groups, judged } = failingGroups(rule, targets, peers, nowMs);
  const group = largest(groups);
  const count = group?.ids.length ?? 0;
  const sinceMs = group?.sinceMs ?? Number.POSITIVE_INFINITY;
  const failing = new Set(group?.ids);
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
        // built at every judging pass while the parent fires: the ten shown are found without sorting every id
        targets: listMembersSorted(group?.ids ?? []),
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
  cause: { evaluate, childKinds: new Set() },
});
