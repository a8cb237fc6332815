// market_move: many pairs crossing their price_change thresholds in one direction within one window; those alerts are children.
import type { ChildRecord } from "../cause-summary.js";
import type { AlertLabels, RuleKind } from "../events.js";
import { formatSignedPercent, formatWindowMs } from "../format.js";
import { inScope } from "../rule-scope.js";
import {
  childValue,
  enoughMembers,
  evaluateGroups,
  listMembers,
  type ChildGroup,
  type ChildView,
} from "./cause.js";
import type { RuleCommon } from "./common.js";
import { defineRule, type CauseContext, type CauseFinding } from "./definition.js";

/** ≥ threshold pairs (and ≥ minFraction of the monitored pairs) moving one way within windowMs. */
export interface MarketMoveRule extends RuleCommon {
  readonly kind: "market_move";
  /** Fraction of the monitored pairs that must move; 0 = the count alone. */
  readonly minFraction: number;
  /** The pairs' price_change conditions must have started within this long of now to count towards firing (ms). */
  readonly windowMs: number;
}

const CHILD_KINDS: ReadonlySet<RuleKind> = new Set<RuleKind>(["price_change"]);

/** A price_change alert points at the direction of its move. */
function childView(record: ChildRecord): ChildView | null {
  const pair = record.labels["pair"];
  const value = childValue(record);
  if (pair === undefined || value === null || value === 0) return null;
  const direction = value > 0 ? "up" : "down";
  return { key: direction, labels: { direction }, member: pair };
}

function parentView(labels: AlertLabels): Pick<ChildView, "key" | "labels"> | null {
  const direction = labels["direction"];
  return direction === undefined ? null : { key: direction, labels: { direction } };
}

/**
 * Distinct pairs of the price targets (the engine's, counted by its registry, and the peers'): what minFraction is a
 * fraction of. One daemon has no peers: the count is the registry's, with no set built at every cause pass.
 */
function pairCount(pricePairs: ReadonlyMap<string, number>, peers: ReadonlySet<string>): number {
  if (peers.size === 0) return pricePairs.size;
  const pairs = new Set<string>(peers);
  for (const pair of pricePairs.keys()) pairs.add(pair);
  return pairs.size;
}

/** The pairs of a group in scope, largest move first, and how many crossed within the window. */
function movesOf(rule: MarketMoveRule, group: ChildGroup, nowMs: number) {
  const moves: { pair: string; value: number }[] = [];
  let recent = 0;
  for (const [pair, records] of group.members) {
    if (!inScope(rule, pair)) continue;
    let value = 0;
    let crossedRecently = false;
    for (const record of records) {
      const v = childValue(record) ?? 0;
      if (Math.abs(v) > Math.abs(value)) value = v;
      if (record.pendingSinceMs >= nowMs - rule.windowMs) crossedRecently = true;
    }
    moves.push({ pair, value });
    if (crossedRecently) recent++;
  }
  moves.sort((a, b) => Math.abs(b.value) - Math.abs(a.value) || (a.pair < b.pair ? -1 : 1));
  return { moves, recent };
}

/** One verdict per direction with moving pairs (and per existing parent). */
function evaluate(context: CauseContext<MarketMoveRule>): readonly CauseFinding[] {
  const total = pairCount(context.pricePairs, context.peers.pairs);
  return evaluateGroups(context, {
    kinds: CHILD_KINDS,
    view: childView,
    parentView,
    scopeKey: (group) => group.key,
    judge(group, settings, { rule, nowMs }) {
      const { moves, recent } = movesOf(rule, group, nowMs);
      const count = moves.length;
      const listed = moves.map((m) => `${m.pair} ${formatSignedPercent(m.value)}`);
      return {
        count,
        fires: enoughMembers(recent, settings.threshold, rule.minFraction, total),
        describe: () => ({
          summary:
            count === 0
              ? `market move ${group.key} over: no pair beyond its price_change threshold`
              : `market move ${group.key}: ${count} of ${total} pairs moved past their price_change thresholds within ${formatWindowMs(rule.windowMs)}: ${listMembers(listed)}`,
          context: { direction: group.key, pairs: moves.map((m) => m.pair).join(","), count, total },
        }),
      };
    },
  });
}

/** market_move: a cause rule over price_change alerts, one parent per direction. */
export const marketMove = defineRule<MarketMoveRule>({
  appliesTo: () => false,
  keys: "many",
  detect: () => [],
  cause: { evaluate, childKinds: CHILD_KINDS },
});
