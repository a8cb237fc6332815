// publisher_stale: an on-chain publisher (and, when perFeed, each of its feeds) not updated for too long.
import { noData, thresholdMeasure, type Measure } from "../finding.js";
import { formatDurationMs, toIso } from "../format.js";
import { inScope, settingsFor, type RuleSettings } from "../rule-scope.js";
import type { OnchainPublisher } from "../types.js";
import type { RuleCommon } from "./common.js";
import { defineRule } from "./definition.js";

/** Publisher (or each of its feeds when perFeed) not updated for ≥ threshold ms. */
export interface PublisherStaleRule extends RuleCommon {
  readonly kind: "publisher_stale";
  readonly perFeed: boolean;
}

const NO_LIST = noData("no publisher list");

/** publisher_stale on publisher lists: now − lastUpdated ≥ threshold ms per publisher (filtered and overridden by name), and per feed when perFeed. */
export const publisherStale = defineRule<PublisherStaleRule>({
  restoredKey: (labels) => ({ scopeKey: labels["publisher"] ?? "", targetIds: [] }),
  appliesTo: (_rule, target) => target.kind === "publishers",
  filtersPublishers: true,
  coversKey: (rule, publisher) => inScope(rule, publisher),
  timeDriven: true,
  keys: "many",
  detect({ target, rule, nowMs }) {
    const snapshot = target.snapshot;
    if (snapshot?.kind !== "publishers") return NO_LIST;
    const network = target.spec.kind === "publishers" ? target.spec.network : "";
    const observedAtMs = target.observedAtMs;
    const findings: Measure[] = [];
    for (const publisher of snapshot.value) {
      const name = publisher.publisher;
      if (!inScope(rule, name)) continue;
      const settings = settingsFor(rule, name, "above");
      const lastUpdatedMs = publisher.lastUpdatedMs;
      // No timestamp (no component of this data type) is no age: the publisher's alert keeps its state.
      if (lastUpdatedMs !== null)
        findings.push(publisherAge(name, network, lastUpdatedMs, nowMs, observedAtMs, settings));
      if (rule.perFeed) findings.push(...feedAges(publisher, nowMs, observedAtMs, settings));
    }
    return findings;
  },
});

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

/** The age measures of each feed of a publisher. */
function feedAges(
  publisher: OnchainPublisher,
  nowMs: number,
  observedAtMs: number,
  settings: RuleSettings,
): Measure[] {
  const name = publisher.publisher;
  return publisher.feeds.map((feed) => {
    const feedAgeMs = nowMs - feed.lastUpdatedMs;
    return thresholdMeasure({
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
    });
  });
}
