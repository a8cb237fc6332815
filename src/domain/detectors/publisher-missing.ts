// publisher_missing: an expected publisher absent from the publisher list or from a pair's on-chain entries.
import { toIso } from "../format.js";
import { inScope, settingsFor } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import { booleanMeasure, noData, type Finding, type Measure, type RuleOf } from "./finding.js";

/** One 1/0 finding per expected publisher (names compared case-insensitively); an empty list is no data. */
export function detectPublisherMissing(
  data: TargetData,
  rule: RuleOf<"publisher_missing">,
  _nowMs: number,
): readonly Finding[] {
  const snapshot = data.snapshot;
  let present: Set<string>;
  let where: string;
  if (snapshot?.kind === "publishers") {
    present = new Set(snapshot.value.map((p) => p.publisher.toUpperCase()));
    where = `the ${data.spec.kind === "publishers" ? data.spec.network : ""} publisher list`;
  } else if (snapshot?.kind === "onchain") {
    present = new Set(snapshot.value.components.map((entry) => entry.publisher.toUpperCase()));
    where = `${snapshot.value.pairId} on-chain entries`;
  } else return noData("no publisher data");
  // An empty list or entry set says nothing about who is publishing.
  if (present.size === 0) return noData("empty publisher data");
  const observedAtMs = data.observedAtMs;
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
        severity: settingsFor(rule, name).severity,
        describe: () => ({
          summary: `publisher ${name} is ${missing ? "missing from" : "present in"} ${where}`,
          context: { missing, observedAt: toIso(observedAtMs) },
        }),
      }),
    );
  }
  return findings;
}
