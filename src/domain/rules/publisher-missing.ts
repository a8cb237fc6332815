// publisher_missing: an expected publisher absent from the publisher list or from a pair's on-chain entries.
import { booleanMeasure, noData, type Measure } from "../finding.js";
import { toIso } from "../format.js";
import { inScope, settingsFor } from "../rule-scope.js";
import type { RuleCommon } from "./common.js";
import { defineRule } from "./definition.js";

/** An expected publisher is absent from the publisher list or from a pair's entry set. */
export interface PublisherMissingRule extends RuleCommon {
  readonly kind: "publisher_missing";
  readonly publishers: readonly string[];
}

const NO_DATA = noData("no publisher data");
const EMPTY = noData("empty publisher data");

/** publisher_missing on publisher lists and on-chain entry sets: one 1/0 finding per expected publisher (names compared case-insensitively). */
export const publisherMissing = defineRule<PublisherMissingRule>({
  restoredKey: (labels) => ({ scopeKey: labels["publisher"] ?? "", targetIds: [] }),
  appliesTo: (_rule, target) => target.kind === "publishers" || target.kind === "onchain",
  filtersPublishers: true,
  coversKey: (rule, publisher) => rule.publishers.includes(publisher) && inScope(rule, publisher),
  keys: "many",
  detect({ target, rule }) {
    const snapshot = target.snapshot;
    let present: Set<string>;
    let where: string;
    if (snapshot?.kind === "publishers") {
      present = new Set(snapshot.value.map((p) => p.publisher.toUpperCase()));
      where = `the ${target.spec.kind === "publishers" ? target.spec.network : ""} publisher list`;
    } else if (snapshot?.kind === "onchain") {
      present = new Set(snapshot.value.components.map((entry) => entry.publisher.toUpperCase()));
      where = `${snapshot.value.pairId} on-chain entries`;
    } else return NO_DATA;
    // An empty list or entry set says nothing about who is publishing.
    if (present.size === 0) return EMPTY;
    const observedAtMs = target.observedAtMs;
    const findings: Measure[] = [];
    for (const name of rule.publishers) {
      if (!inScope(rule, name)) continue;
      const missing = !present.has(name.toUpperCase());
      findings.push(
        booleanMeasure({
          subKey: name,
          scopeKey: name,
          extraLabels: { publisher: name },
          active: missing,
          severity: settingsFor(rule, name, "above").severity,
          describe: () => ({
            summary: `publisher ${name} is ${missing ? "missing from" : "present in"} ${where}`,
            context: { missing, observedAt: toIso(observedAtMs) },
          }),
        }),
      );
    }
    return findings;
  },
});
