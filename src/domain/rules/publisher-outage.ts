// publisher_outage: one publisher stale or missing on many pairs; its per-pair publisher_stale / publisher_missing alerts are children.
import type { ChildRecord } from "../cause-summary.js";
import type { AlertLabels, RuleKind } from "../events.js";
import { inScope } from "../rule-scope.js";
import { evaluateGroups, listMembers, type ChildView } from "./cause.js";
import type { RuleCommon } from "./common.js";
import { defineRule, type CauseContext, type CauseFinding } from "./definition.js";

/** A publisher stale or missing on ≥ threshold pairs. */
export interface PublisherOutageRule extends RuleCommon {
  readonly kind: "publisher_outage";
}

const CHILD_KINDS: ReadonlySet<RuleKind> = new Set<RuleKind>(["publisher_stale", "publisher_missing"]);

/** A per-pair publisher alert points at its publisher (alerts without a pair, one per publisher, are no children). */
function childView(record: ChildRecord): ChildView | null {
  const publisher = record.labels["publisher"];
  const pair = record.labels["pair"];
  if (publisher === undefined || pair === undefined) return null;
  return { key: publisher, labels: { publisher }, member: pair };
}

function parentView(labels: AlertLabels): Pick<ChildView, "key" | "labels"> | null {
  const publisher = labels["publisher"];
  return publisher === undefined ? null : { key: publisher, labels: { publisher } };
}

/** One verdict per publisher with per-pair alerts (and per existing parent). */
function evaluate(context: CauseContext<PublisherOutageRule>): readonly CauseFinding[] {
  return evaluateGroups(context, {
    kinds: CHILD_KINDS,
    view: childView,
    parentView,
    scopeKey: (group) => group.key,
    judge(group, _settings, { rule }) {
      const pairs = [...group.members.keys()].sort();
      const count = inScope(rule, group.key) ? pairs.length : 0;
      const kinds = new Set([...group.members.values()].flat().map((record) => record.ruleKind));
      const what = [...kinds].sort().map((kind) => (kind === "publisher_stale" ? "stale" : "missing"));
      return {
        count,
        describe: () => ({
          summary:
            count === 0
              ? `publisher ${group.key} publishes again on every pair`
              : `publisher ${group.key} ${what.join(" or ")} on ${count} pairs: ${listMembers(pairs)}`,
          context: { publisher: group.key, pairs: pairs.join(","), count },
        }),
      };
    },
  });
}

/** publisher_outage: a cause rule over per-pair publisher_stale (perFeed) and on-chain publisher_missing alerts. */
export const publisherOutage = defineRule<PublisherOutageRule>({
  appliesTo: () => false,
  keys: "many",
  detect: () => [],
  cause: { evaluate, childKinds: CHILD_KINDS },
});
