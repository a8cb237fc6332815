// publisher_stale: an on-chain publisher (and, when perFeed, each of its feeds) not updated for too long.
import { formatDurationMs, toIso } from "../format.js";
import { inScope, settingsFor, type RuleSettings } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import { noData, thresholdMeasure, type Finding, type Measure, type RuleOf } from "./finding.js";

/** now − lastUpdated ≥ threshold ms per publisher (filtered and overridden by publisher name), and per feed when perFeed. */
export function detectPublisherStale(
  data: TargetData,
  rule: RuleOf<"publisher_stale">,
  nowMs: number,
): readonly Finding[] {
  const snapshot = data.snapshot;
  if (snapshot?.kind !== "publishers") return noData("no publisher list");
  const network = data.spec.kind === "publishers" ? data.spec.network : "";
  const observedAtMs = data.observedAtMs;
  const findings: Measure[] = [];
  for (const publisher of snapshot.value) {
    const name = publisher.publisher;
    if (!inScope(rule, name)) continue;
    const settings = settingsFor(rule, name);
    const lastUpdatedMs = publisher.lastUpdatedMs;
    // No timestamp (no component of this data type) is no age: the publisher's alert keeps its state.
    if (lastUpdatedMs !== null)
      findings.push(publisherAge(name, network, lastUpdatedMs, nowMs, observedAtMs, settings));
    if (!rule.perFeed) continue;
    for (const feed of publisher.feeds) {
      const feedAgeMs = nowMs - feed.lastUpdatedMs;
      findings.push(
        thresholdMeasure({
          subKey: `${name}\u001f${feed.pairId}\u001f${feed.source}`,
          scopeKey: name,
          extraLabels: { publisher: name, pair: feed.pairId, source: feed.source },
          magnitude: feedAgeMs,
          value: feedAgeMs,
          settings,
          describe: () => ({
            summary: `publisher ${name} feed ${feed.pairId} (${feed.source}) last updated ${formatDurationMs(feedAgeMs)} ago (threshold ${formatDurationMs(settings.threshold)})`,
            context: {
              ageMs: feedAgeMs,
              lastUpdatedAt: toIso(feed.lastUpdatedMs),
              price: feed.decimalsKnown ? feed.price.text : null,
              observedAt: toIso(observedAtMs),
            },
          }),
        }),
      );
    }
  }
  return findings;
}

/** The age measure of one publisher (its last update, any feed). */
function publisherAge(
  name: string,
  network: string,
  lastUpdatedMs: number,
  nowMs: number,
  observedAtMs: number,
  settings: RuleSettings,
): Measure {
  const ageMs = nowMs - lastUpdatedMs;
  return thresholdMeasure({
    subKey: name,
    scopeKey: name,
    extraLabels: { publisher: name },
    magnitude: ageMs,
    value: ageMs,
    settings,
    describe: () => ({
      summary: `publisher ${name} on ${network} last updated ${formatDurationMs(ageMs)} ago (threshold ${formatDurationMs(settings.threshold)})`,
      context: { ageMs, lastUpdatedAt: toIso(lastUpdatedMs), observedAt: toIso(observedAtMs) },
    }),
  });
}
