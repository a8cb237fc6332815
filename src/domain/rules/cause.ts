// What the cause rules share: child alerts grouped by the cause they point at, members counted, the parent's measure.
import type { AlertRecord } from "../alert-engine.js";
import type { ChildRecord } from "../cause-summary.js";
import type { AlertLabels, RuleKind } from "../events.js";
import type { Description, Measure } from "../finding.js";
import { settingsFor, type RuleSettings } from "../rule-scope.js";
import type { RuleCommon } from "./common.js";
import type { CauseContext, CauseFinding } from "./definition.js";

/** Where a child alert points: the cause's key and labels, and the member (pair) it counts as; null = not a child. */
export interface ChildView {
  readonly key: string;
  readonly labels: AlertLabels;
  readonly member: string;
}

/** Child alerts sharing one cause. */
export interface ChildGroup {
  readonly key: string;
  readonly labels: AlertLabels;
  /** Records whose condition holds now (pending, or firing with the condition on), by member. */
  readonly members: Map<string, ChildRecord[]>;
  /** Fingerprints of every pending or firing child (held ones too): what the parent adopts while it fires. */
  readonly children: string[];
}

/**
 * Group the pending and firing records of `kinds` (the engine's, then the peers' it does not hold) by the cause
 * `view` reads off each; every existing parent seeds its own group (`parentView` of its labels), so a parent whose
 * children are gone still gets a verdict.
 */
export function groupChildren(
  alerts: ReadonlyMap<string, AlertRecord>,
  peers: readonly ChildRecord[],
  parents: readonly AlertRecord[],
  kinds: ReadonlySet<RuleKind>,
  view: (record: ChildRecord) => ChildView | null,
  parentView: (labels: AlertLabels) => Pick<ChildView, "key" | "labels"> | null,
): Map<string, ChildGroup> {
  const groups = new Map<string, ChildGroup>();
  const groupOf = (key: string, labels: AlertLabels): ChildGroup => {
    let group = groups.get(key);
    if (group === undefined) {
      group = { key, labels, members: new Map(), children: [] };
      groups.set(key, group);
    }
    return group;
  };
  for (const parent of parents) {
    const seed = parentView(parent.labels);
    if (seed !== null) groupOf(seed.key, seed.labels);
  }
  const add = (record: ChildRecord): void => {
    if (record.status === "inactive" || !kinds.has(record.ruleKind)) return;
    const child = view(record);
    if (child === null) return;
    const group = groupOf(child.key, child.labels);
    group.children.push(record.fingerprint);
    if (!record.rawActive) return;
    const list = group.members.get(child.member);
    if (list === undefined) group.members.set(child.member, [record]);
    else list.push(record);
  };
  for (const record of alerts.values()) add(record);
  for (const record of peers) if (!alerts.has(record.fingerprint)) add(record);
  return groups;
}

/** The signed value a child last measured (its finding, else its announcement); null when it has none. */
export function childValue(record: ChildRecord): number | null {
  return record.finding?.value ?? record.announced?.value ?? null;
}

/** Inputs of a parent's measure: its key and labels, its member count, whether it fires, and its settings. */
export interface CauseMeasureInput {
  readonly key: string;
  readonly labels: AlertLabels;
  readonly count: number;
  readonly fires: boolean;
  readonly settings: RuleSettings;
  readonly describe: () => Description;
}

/** A parent's measure: the count of members as its value; it clears once fewer than clearThreshold (at least 1) are left. */
export function causeMeasure(input: CauseMeasureInput): Measure {
  const { settings, count } = input;
  return {
    kind: "measure",
    subKey: input.key,
    scopeKey: input.key,
    extraLabels: input.labels,
    value: count,
    threshold: settings.threshold,
    severity: settings.severity,
    fires: input.fires,
    clears: count < Math.max(1, settings.clearThreshold),
    relatedTargetId: null,
    describe: input.describe,
  };
}

/** What a grouped cause rule says of one group of children: its member count, whether it fires, its text. */
export interface GroupVerdict {
  readonly count: number;
  /** Default: at least `threshold` members. */
  readonly fires?: boolean;
  readonly describe: () => Description;
}

/** How a grouped cause rule reads its children and judges each group. */
export interface GroupedCause<R> {
  readonly kinds: ReadonlySet<RuleKind>;
  readonly view: (record: ChildRecord) => ChildView | null;
  readonly parentView: (labels: AlertLabels) => Pick<ChildView, "key" | "labels"> | null;
  /** The key the rule's overrides use for a group (its publisher, its source, its direction). */
  readonly scopeKey: (group: ChildGroup) => string;
  readonly judge: (group: ChildGroup, settings: RuleSettings, context: CauseContext<R>) => GroupVerdict;
}

/** The findings of a grouped cause rule: one per group of children (and per existing parent). */
export function evaluateGroups<R extends RuleCommon>(
  context: CauseContext<R>,
  cause: GroupedCause<R>,
): readonly CauseFinding[] {
  const groups = groupChildren(
    context.alerts,
    context.peers.children,
    context.parents,
    cause.kinds,
    cause.view,
    cause.parentView,
  );
  const findings: CauseFinding[] = [];
  for (const group of groups.values()) {
    const settings = settingsFor(context.rule, cause.scopeKey(group), "above");
    const { count, describe, ...verdict } = cause.judge(group, settings, context);
    const fires = verdict.fires ?? enoughMembers(count, settings.threshold, 0, 0);
    findings.push({
      children: group.children,
      measure: causeMeasure({ key: group.key, labels: group.labels, count, fires, settings, describe }),
    });
  }
  return findings;
}

/** At least `threshold` members and, when `minFraction` > 0, at least that fraction of `total` (none when total is 0). */
export function enoughMembers(count: number, threshold: number, minFraction: number, total: number): boolean {
  if (count < Math.max(1, threshold)) return false;
  return minFraction <= 0 || (total > 0 && count >= minFraction * total);
}

/** Members listed for a summary: at most `max`, then "and K more". */
export function listMembers(members: readonly string[], max = 10): string {
  return listedText(members.slice(0, max), members.length);
}

/**
 * listMembers of `members` in text order (as `[...members].sort()`), sorting only the `max` shown: upstream_down
 * describes its firing parent at every pass, over as many as every target (1 500 in a cluster), where a full sort
 * cost O(n log n) a pass; this is one walk, each member compared with at most `max` of those shown.
 */
export function listMembersSorted(members: readonly string[], max = 10): string {
  return listedText(firstInTextOrder(members, max), members.length);
}

/** The `shown` members, then "and K more" of the `total`. */
function listedText(shown: readonly string[], total: number): string {
  const text = shown.join(", ");
  return total > shown.length ? `${text} and ${total - shown.length} more` : text;
}

/** The first `max` of `members` in text order (UTF-16 code units, as Array.prototype.sort), duplicates kept. */
function firstInTextOrder(members: readonly string[], max: number): string[] {
  const first: string[] = [];
  for (const member of members) {
    const last = first[first.length - 1];
    if (first.length >= max) {
      if (last === undefined || !(member < last)) continue;
      first.pop();
    }
    let at = first.length;
    while (at > 0 && member < first[at - 1]!) at--;
    first.splice(at, 0, member);
  }
  return first;
}
