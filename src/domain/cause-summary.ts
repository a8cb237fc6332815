// Cluster mode's input of the cause rules: what one member's cause rules read of its own state, as a summary the
// other members judge with (its failing targets, how many others each upstream_down rule judges, its price pairs,
// its child alerts), and the union of the live members' summaries a cause pass reads besides its own engine.
import { childValue } from "./rules/cause.js";
import { definitionOf, type RuleConfig } from "./rules/index.js";
import { errorKind, judgesHealthy, type UpstreamDownRule } from "./rules/upstream-down.js";
import type { AlertRecord, EngineState, RecordStatus } from "./alert-engine.js";
import type { AlertLabels, RuleKind } from "./events.js";
import type { TargetRegistry } from "./monitor-targets.js";

/** A target whose latest poll failed, as upstream_down groups it. */
export interface FailingTarget {
  readonly id: string;
  /** The kind of its error (`HTTP 500`, `ECONNREFUSED`, ...: errorKind). */
  readonly kind: string;
  /** Its error is a network error (the summary says "unreachable"). */
  readonly network: boolean;
  readonly sinceMs: number;
}

/**
 * A pending or firing child alert as the cause rules read it: one of this engine's records, or one a peer summarised
 * (its value as the finding's, childValue reads either).
 */
export type ChildRecord = Pick<
  AlertRecord,
  "fingerprint" | "ruleKind" | "labels" | "status" | "rawActive" | "pendingSinceMs"
> & {
  readonly finding: { readonly value: number | null } | null;
  readonly announced: { readonly value: number | null } | null;
};

/** A child alert in a member's summary. */
export interface ChildSummary {
  readonly fingerprint: string;
  readonly rule: RuleKind;
  readonly labels: AlertLabels;
  readonly status: Exclude<RecordStatus, "inactive">;
  /** Its condition holds now (rawActive): only those count towards a cause. */
  readonly active: boolean;
  readonly value: number | null;
  readonly pendingSinceMs: number;
}

/** What one member's cause rules read of its own targets and alerts (JSON-safe: a member writes it to NATS KV). */
export interface CauseSummary {
  /** Its targets whose latest poll failed (while an upstream_down rule is enabled). */
  readonly failing: readonly FailingTarget[];
  /** By upstream_down rule id: how many of its targets that do not fail the rule judges (not polled yet, or fine within windowMs). */
  readonly judged: Readonly<Record<string, number>>;
  /** The pairs of its price targets, sorted (while market_move is enabled: what its minFraction is a fraction of). */
  readonly pairs: readonly string[];
  /** Its pending and firing alerts of the kinds the enabled cause rules group (publisher_*, component_deviation, price_change). */
  readonly children: readonly ChildSummary[];
}

/** The other live members' summaries as one: what a cause pass reads besides its own engine. */
export interface PeerCauses {
  readonly failing: readonly FailingTarget[];
  readonly judged: ReadonlyMap<string, number>;
  readonly pairs: ReadonlySet<string>;
  readonly children: readonly ChildRecord[];
}

/** No other member (one daemon). */
export const NO_PEERS: PeerCauses = Object.freeze({
  failing: Object.freeze([]),
  judged: new Map<string, number>(),
  pairs: new Set<string>(),
  children: Object.freeze([]),
});

/** The cluster's part of a member's cause pass (null on one daemon). */
export interface ClusterCauses {
  /**
   * This member judges the cause rules (it owns the `cause:` key) over its own engine and the peers; else it only
   * links its own children to the cause alerts firing in the cluster's log.
   */
  readonly judges: boolean;
  readonly peers: PeerCauses;
  /** Fingerprints of the cause alerts firing in the cluster's log (as this member read it). */
  readonly firing: ReadonlySet<string>;
}

/** A summary of what the enabled cause rules (`causes`) read of `monitor` at `nowMs`. */
export function summarizeCauses(
  monitor: { readonly targets: TargetRegistry; readonly engine: EngineState },
  causes: readonly RuleConfig[],
  nowMs: number,
): CauseSummary {
  const down = causes.filter((rule): rule is UpstreamDownRule => rule.kind === "upstream_down");
  const failing: FailingTarget[] = [];
  const judged: Record<string, number> = Object.fromEntries(down.map((rule) => [rule.id, 0]));
  const pairs = new Set<string>();
  const counting = causes.some((rule) => rule.kind === "market_move");
  for (const data of monitor.targets.byId.values()) {
    const error = data.lastError;
    if (counting && (data.spec.kind === "offchain" || data.spec.kind === "onchain"))
      pairs.add(data.spec.pair);
    if (down.length === 0) continue;
    if (data.failures > 0 && error !== null) {
      const network = error.code === "PM_ERR_UPSTREAM_NETWORK";
      failing.push({ id: data.spec.id, kind: errorKind(error), network, sinceMs: data.failingSinceMs });
    } else
      for (const rule of down)
        if (judgesHealthy(rule, data, nowMs)) judged[rule.id] = (judged[rule.id] ?? 0) + 1;
  }
  const kinds = new Set(causes.flatMap((rule) => [...(definitionOf(rule).cause?.childKinds ?? [])]));
  const children: ChildSummary[] = [];
  for (const record of monitor.engine.alerts.values()) {
    if (record.status === "inactive" || !kinds.has(record.ruleKind)) continue;
    children.push({
      fingerprint: record.fingerprint,
      rule: record.ruleKind,
      labels: record.labels,
      status: record.status,
      active: record.rawActive,
      value: childValue(record),
      pendingSinceMs: record.pendingSinceMs,
    });
  }
  return { failing, judged, pairs: [...pairs].sort(), children };
}

/** The union of the peers' summaries (each target and child once: the first summary holding it wins). */
export function mergePeerCauses(summaries: readonly CauseSummary[]): PeerCauses {
  if (summaries.length === 0) return NO_PEERS;
  const failing = new Map<string, FailingTarget>();
  const judged = new Map<string, number>();
  const pairs = new Set<string>();
  const children = new Map<string, ChildRecord>();
  for (const summary of summaries) {
    for (const target of summary.failing) if (!failing.has(target.id)) failing.set(target.id, target);
    for (const [ruleId, count] of Object.entries(summary.judged))
      judged.set(ruleId, (judged.get(ruleId) ?? 0) + count);
    for (const pair of summary.pairs) pairs.add(pair);
    for (const child of summary.children)
      if (!children.has(child.fingerprint)) children.set(child.fingerprint, childRecordOf(child));
  }
  return { failing: [...failing.values()], judged, pairs, children: [...children.values()] };
}

/** A summarised child as the cause rules read a record. */
function childRecordOf(child: ChildSummary): ChildRecord {
  return {
    fingerprint: child.fingerprint,
    ruleKind: child.rule,
    labels: child.labels,
    status: child.status,
    rawActive: child.active,
    pendingSinceMs: child.pendingSinceMs,
    finding: { value: child.value },
    announced: null,
  };
}
