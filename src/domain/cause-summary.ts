// Cluster mode's input of the cause rules: what one member's cause rules read of its own state, as a summary the
// other members judge with (its failing targets, how many others each upstream_down rule judges, its price pairs,
// its child alerts), and the union of the live members' summaries a cause pass reads besides its own engine.
import { fnv1a64Hex } from "./fingerprint.js";
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
  /** The ids of its targets (while an upstream_down rule is enabled), sorted: what the rule's fraction is of. */
  readonly held: readonly string[];
  /** Those of `held` it has not polled yet: its word on them does not count while another member's does. */
  readonly unpolled: readonly string[];
  /** By upstream_down rule id: its targets polled fine but longer than windowMs ago (the rule does not judge them). */
  readonly unjudged: Readonly<Record<string, readonly string[]>>;
  /** The pairs of its price targets, sorted (while market_move is enabled: what its minFraction is a fraction of). */
  readonly pairs: readonly string[];
  /** Its pending and firing alerts of the kinds the enabled cause rules group (publisher_*, component_deviation, price_change). */
  readonly children: readonly ChildSummary[];
}

/**
 * The other live members' summaries as one: what a cause pass reads besides its own engine. Each target's word is
 * that of the first summary (in the order merged) that polled it: a target moving between members counts once.
 */
export interface PeerCauses {
  readonly failing: readonly FailingTarget[];
  /** Every peer's targets. */
  readonly held: ReadonlySet<string>;
  /** The targets some peer polled. */
  readonly polled: ReadonlySet<string>;
  /** By upstream_down rule id: the peers' targets the rule does not judge. */
  readonly unjudged: ReadonlyMap<string, ReadonlySet<string>>;
  readonly pairs: ReadonlySet<string>;
  readonly children: readonly ChildRecord[];
}

/** No other member (one daemon). */
export const NO_PEERS: PeerCauses = Object.freeze({
  failing: Object.freeze([]),
  held: new Set<string>(),
  polled: new Set<string>(),
  unjudged: new Map<string, ReadonlySet<string>>(),
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
  /**
   * The peers' summaries are in (the watch delivered the records the bucket held when it started):
   * until then a judging member steps no parent either (a cause judged on missing input would resolve, then fire again).
   */
  readonly ready: boolean;
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
  const held: string[] = [];
  const unpolled: string[] = [];
  const unjudged: Record<string, string[]> = Object.fromEntries(down.map((rule) => [rule.id, []]));
  // the pairs of the price targets (off-chain, on-chain), which the registry keeps counted
  const counting = causes.some((rule) => rule.kind === "market_move");
  const pairs = counting ? [...monitor.targets.pricePairs.keys()].sort() : [];
  for (const data of down.length === 0 ? [] : monitor.targets.byId.values()) {
    const error = data.lastError;
    held.push(data.spec.id);
    if (Number.isNaN(data.lastPollAtMs)) unpolled.push(data.spec.id);
    if (data.failures > 0 && error !== null) {
      const network = error.code === "PM_ERR_UPSTREAM_NETWORK";
      failing.push({ id: data.spec.id, kind: errorKind(error), network, sinceMs: data.failingSinceMs });
    } else
      for (const rule of down) if (!judgesHealthy(rule, data, nowMs)) unjudged[rule.id]?.push(data.spec.id);
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
  return { failing, held: held.sort(), unpolled, unjudged, pairs, children };
}

/**
 * The union of the peers' summaries, in the order given (the live members' first): a target's word is the first
 * summary's that polled it, a child's the first summary's holding it.
 */
export function mergePeerCauses(summaries: readonly CauseSummary[]): PeerCauses {
  if (summaries.length === 0) return NO_PEERS;
  const held = new Set<string>();
  // target id → the index of the summary whose word on it counts
  const word = new Map<string, number>();
  summaries.forEach((summary, index) => {
    const unpolled = new Set(summary.unpolled);
    for (const id of summary.held) {
      held.add(id);
      if (!unpolled.has(id) && !word.has(id)) word.set(id, index);
    }
  });
  const failing: FailingTarget[] = [];
  const unjudged = new Map<string, Set<string>>();
  const pairs = new Set<string>();
  const children = new Map<string, ChildRecord>();
  summaries.forEach((summary, index) => {
    for (const target of summary.failing) if (word.get(target.id) === index) failing.push(target);
    for (const [ruleId, ids] of Object.entries(summary.unjudged)) {
      const set = unjudged.get(ruleId) ?? new Set<string>();
      unjudged.set(ruleId, set);
      for (const id of ids) if (word.get(id) === index) set.add(id);
    }
    for (const pair of summary.pairs) pairs.add(pair);
    for (const child of summary.children)
      if (!children.has(child.fingerprint)) children.set(child.fingerprint, childRecordOf(child));
  });
  return { failing, held, polled: new Set(word.keys()), unjudged, pairs, children: [...children.values()] };
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

/**
 * The hash of the configuration a cause judgement over members' summaries depends on (16 hex digits): the enabled
 * cause rules (`causes`, every setting: their ids key `unjudged`, their windows decide it, their kinds what a summary
 * carries) and the enabled rules (of `rules`) of the kinds those group as children (their settings decide which child
 * alerts exist, with which value and since when). Not the targets: a summary names its own (`held`) and the union
 * counts each once, so a member still polling an older target set contributes exactly what it polls.
 */
export function causeConfigHash(causes: readonly RuleConfig[], rules: readonly RuleConfig[]): string {
  const kinds = new Set(causes.flatMap((rule) => [...(definitionOf(rule).cause?.childKinds ?? [])]));
  const children = rules.filter((rule) => rule.enabled && kinds.has(rule.kind));
  return fnv1a64Hex(canonicalJson([causes, children]));
}

/** JSON with every object's keys sorted: the same settings give the same text whatever order they were read in. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The summary as text with each child's value reduced to its sign: what the cause rules' verdicts read of it (a
 * market_move child's direction; the size of a move only words the parent's text). A summary whose verdict text is
 * unchanged need not be shared again at once: its values ride along with the next write.
 */
export function summaryVerdictText(summary: CauseSummary): string {
  const children = summary.children.map((child) =>
    child.value === null ? child : { ...child, value: Math.sign(child.value) },
  );
  return JSON.stringify({ ...summary, children });
}
