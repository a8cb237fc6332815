// What a rule kind is, in one object: the targets it reads, its scope, labels and direction, when it runs, the history it needs, and its detector.
import type { AlertRecord } from "../alert-engine.js";
import type { PeerCauses } from "../cause-summary.js";
import type { AlertLabels, RuleKind } from "../events.js";
import type { Finding, Measure } from "../finding.js";
import { inScope, targetLabels, targetScopeKey, type Direction, type RuleSettings } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import type { TargetSpec } from "../types.js";
import type { RuleCommon } from "./common.js";

/** Everything a detector reads, as one plain object built by the evaluator for one rule on one target. */
export interface DetectContext<R> {
  readonly target: TargetData;
  readonly rule: R;
  /** The key the rule's pairs filter and overrides use for the target (see RuleDefinition.scopeKey). */
  readonly scopeKey: string;
  /** The rule's settings for scopeKey (overrides and hysteresis applied). */
  readonly settings: RuleSettings;
  readonly nowMs: number;
  /** The related target (RuleDefinition.related), when the rule has one and it is monitored. */
  readonly related: TargetData | undefined;
}

/**
 * What a cause rule reads: the alert records of the engine and the targets' data, and (cluster mode) what the other
 * live members summarised of theirs, at `nowMs`.
 */
export interface CauseContext<R> {
  readonly rule: R;
  readonly alerts: ReadonlyMap<string, AlertRecord>;
  readonly targets: ReadonlyMap<string, TargetData>;
  /** The pairs of the engine's price targets (off-chain, on-chain), each with how many targets have it. */
  readonly pricePairs: ReadonlyMap<string, number>;
  /** The other members' targets and children (none on one daemon); a target or alert the engine holds is its own. */
  readonly peers: PeerCauses;
  /** The rule's own (parent) records that are pending or firing: each needs a finding, so it can clear. */
  readonly parents: readonly AlertRecord[];
  readonly nowMs: number;
}

/** One parent key's verdict: its measure (extraLabels: the parent's labels) and the children it adopts while it fires. */
export interface CauseFinding {
  readonly measure: Measure;
  /** Fingerprints of the child alerts (pending or firing) the cause explains. */
  readonly children: readonly string[];
}

/** An aggregate rule over other alerts (and the targets' poll outcomes): the cause that names many symptoms. */
export interface CauseDefinition<R> {
  readonly evaluate: (context: CauseContext<R>) => readonly CauseFinding[];
  /** The kinds of the child alerts it groups: what a cluster member's summary carries of its alerts (none: it reads targets). */
  readonly childKinds: ReadonlySet<RuleKind>;
}

/** One rule kind as the evaluator sees it; build it with defineRule, which fills the defaults. */
export interface RuleDefinition<R> {
  /** Whether the rule evaluates data of `target` at all (target kind, market); key-level filtering is separate. */
  readonly appliesTo: (rule: R, target: TargetSpec) => boolean;
  /** The key the pairs filter and overrides use for a target (default: its pair, vault id or network). */
  readonly scopeKey: (rule: R, target: TargetSpec) => string;
  /** Whether the pairs filter lets the target through (default: its scope key is listed, or the filter is empty). */
  readonly coversTarget: (rule: R, target: TargetSpec) => boolean;
  /** The pairs filter names publishers: every target passes, each publisher key is filtered (coversKey). */
  readonly filtersPublishers: boolean;
  /** Whether an alert of key `scopeKey` (a publisher) is still configured under the rule (default: yes). */
  readonly coversKey: (rule: R, scopeKey: string) => boolean;
  /** The target's part of the rule's alert labels (default: pair, market, network, source, vault). */
  readonly targetLabels: (target: TargetSpec) => AlertLabels;
  /** The `window` label of windowed rules (default: none). */
  readonly windowLabel: (rule: R) => string | undefined;
  /** The side of the threshold that fires (default: above). */
  readonly direction: (rule: R) => Direction;
  /** The verdict changes with time alone: evaluated on every tick and on failed polls (default: no). */
  readonly timeDriven: boolean;
  /** Evaluated on failed polls (default: only time-driven rules). */
  readonly runsOnFailure: boolean;
  /** Its firing alerts mute the target's other alerts; evaluated first on a target, so a recovery unmutes before the others run. */
  readonly inhibits: boolean;
  /** Price history the rule needs on a target, in ms (default 0: none). */
  readonly historyMs: (rule: R, target: TargetSpec) => number;
  /** "offchain_spot": reads the pair's off-chain spot target, and a new off-chain spot price re-evaluates it on the pair's on-chain targets. */
  readonly related: "offchain_spot" | null;
  /** Alert keys per target: "one" (the target itself, subkey "") or "many" (one per component or publisher). */
  readonly keys: "one" | "many";
  /** Measure the target: threshold measures, or "no data". */
  readonly detect: (context: DetectContext<R>) => readonly Finding[];
  /**
   * Optional shortcut: true only when detect would report nothing that fires (proved cheaply, e.g. on
   * doubles). The evaluator then skips detect when no alert record of the rule could move.
   */
  readonly calm: ((context: DetectContext<R>) => boolean) | null;
  /**
   * The scope key and targets of an alert restored from its announced payload, read off its labels (default:
   * unknown, learnt from the alert's next measurement).
   */
  readonly restoredKey: (labels: AlertLabels) => RestoredKey;
  /** Set on cause rules (they run on no target: appliesTo is false): the aggregate over other alerts. */
  readonly cause: CauseDefinition<R> | null;
}

/** What an announced alert's labels say of its key: the scope key ("" = unknown) and the targets it depends on. */
export interface RestoredKey {
  readonly scopeKey: string;
  readonly targetIds: readonly string[];
}

/** A restored key that knows nothing yet. */
export const UNKNOWN_KEY: RestoredKey = Object.freeze({ scopeKey: "", targetIds: Object.freeze([]) });

type Optional =
  | "scopeKey"
  | "coversTarget"
  | "filtersPublishers"
  | "coversKey"
  | "targetLabels"
  | "windowLabel"
  | "direction"
  | "timeDriven"
  | "runsOnFailure"
  | "inhibits"
  | "historyMs"
  | "related"
  | "calm"
  | "restoredKey"
  | "cause";

/** A rule definition with every field it leaves out set to its default. */
export function defineRule<R extends RuleCommon>(
  definition: Omit<RuleDefinition<R>, Optional> & Partial<Pick<RuleDefinition<R>, Optional>>,
): RuleDefinition<R> {
  const scopeKey = definition.scopeKey ?? ((_rule: R, target: TargetSpec) => targetScopeKey(target));
  const filtersPublishers = definition.filtersPublishers ?? false;
  const timeDriven = definition.timeDriven ?? false;
  return {
    scopeKey,
    coversTarget:
      definition.coversTarget ??
      ((rule, target) => filtersPublishers || inScope(rule, scopeKey(rule, target))),
    filtersPublishers,
    coversKey: definition.coversKey ?? (() => true),
    targetLabels: definition.targetLabels ?? targetLabels,
    windowLabel: definition.windowLabel ?? (() => undefined),
    direction: definition.direction ?? (() => "above"),
    timeDriven,
    runsOnFailure: definition.runsOnFailure ?? timeDriven,
    inhibits: definition.inhibits ?? false,
    historyMs: definition.historyMs ?? (() => 0),
    related: definition.related ?? null,
    calm: definition.calm ?? null,
    restoredKey: definition.restoredKey ?? (() => UNKNOWN_KEY),
    cause: definition.cause ?? null,
    appliesTo: definition.appliesTo,
    keys: definition.keys,
    detect: definition.detect,
  };
}
