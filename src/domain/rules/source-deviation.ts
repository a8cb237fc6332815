// source_deviation: one source deviating from the aggregate on many pairs; its component_deviation alerts are children.
import type { ChildRecord } from "../cause-summary.js";
import type { AlertLabels, RuleKind } from "../events.js";
import { formatSignedPercent } from "../format.js";
import { inScope } from "../rule-scope.js";
import { childValue, evaluateGroups, listMembers, type ChildView } from "./cause.js";
import type { RuleCommon } from "./common.js";
import { defineRule, type CauseContext, type CauseFinding } from "./definition.js";

/** A source (per market) deviating on ≥ threshold pairs. */
export interface SourceDeviationRule extends RuleCommon {
  readonly kind: "source_deviation";
}

const CHILD_KINDS: ReadonlySet<RuleKind> = new Set<RuleKind>(["component_deviation"]);

/** A component_deviation alert points at its source on its market. */
function childView(record: ChildRecord): ChildView | null {
  const source = record.labels["source"];
  const pair = record.labels["pair"];
  const market = record.labels["market"];
  if (source === undefined || pair === undefined || market === undefined) return null;
  return { key: `${market}\u001f${source}`, labels: { source, market }, member: pair };
}

function parentView(labels: AlertLabels): Pick<ChildView, "key" | "labels"> | null {
  const source = labels["source"];
  const market = labels["market"];
  if (source === undefined || market === undefined) return null;
  return { key: `${market}\u001f${source}`, labels: { source, market } };
}

/** One verdict per (market, source) with deviation alerts (and per existing parent). */
function evaluate(context: CauseContext<SourceDeviationRule>): readonly CauseFinding[] {
  return evaluateGroups(context, {
    kinds: CHILD_KINDS,
    view: childView,
    parentView,
    scopeKey: (group) => group.labels["source"] ?? "",
    judge(group, _settings, { rule }) {
      const source = group.labels["source"] ?? "";
      const market = group.labels["market"] ?? "";
      const moves = [...group.members].map(([pair, records]) => ({
        pair,
        value: records[0] === undefined ? null : childValue(records[0]),
      }));
      moves.sort((a, b) => Math.abs(b.value ?? 0) - Math.abs(a.value ?? 0) || (a.pair < b.pair ? -1 : 1));
      const count = inScope(rule, source) ? moves.length : 0;
      const listed = moves.map((m) =>
        m.value === null ? m.pair : `${m.pair} ${formatSignedPercent(m.value)}`,
      );
      return {
        count,
        describe: () => ({
          summary:
            count === 0
              ? `source ${source} (${market}) agrees with the aggregate again`
              : `source ${source} (${market}) deviates from the aggregate on ${count} pairs: ${listMembers(listed)}`,
          context: { source, market, pairs: moves.map((m) => m.pair).join(","), count },
        }),
      };
    },
  });
}

/** source_deviation: a cause rule over component_deviation alerts, one parent per source and market. */
export const sourceDeviation = defineRule<SourceDeviationRule>({
  appliesTo: () => false,
  keys: "many",
  detect: () => [],
  cause: { evaluate, childKinds: CHILD_KINDS },
});
