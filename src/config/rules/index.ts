// The rule kinds a config may declare, keyed by kind (exhaustive by type), and the reader of the `rules` array.
import type { RuleConfig, RuleConfigKind } from "../../domain/rules/index.js";
import { parseArray, parseKinded, reportDuplicates } from "../elements.js";
import type { ConfigProblem } from "../problems.js";
import type { RuleConfigDefinition } from "./common.js";
import { componentDeviation } from "./component-deviation.js";
import { fundingRate } from "./funding-rate.js";
import { lowSources } from "./low-sources.js";
import { onchainOffchainDeviation } from "./onchain-offchain-deviation.js";
import { priceChange } from "./price-change.js";
import { priceLevel } from "./price-level.js";
import { publisherMissing } from "./publisher-missing.js";
import { publisherStale } from "./publisher-stale.js";
import { stalePrice } from "./stale-price.js";
import { marketMove } from "./market-move.js";
import { publisherOutage } from "./publisher-outage.js";
import { sourceDeviation } from "./source-deviation.js";
import { upstreamDown } from "./upstream-down.js";
import { upstreamError } from "./upstream-error.js";
import { variation } from "./variation.js";
import { vaultSharePrice } from "./vault-share-price.js";
import { vaultStatus } from "./vault-status.js";

/** Every configurable rule kind (sink_error is raised internally, not configured), in documentation order. */
export const RULE_DEFINITIONS: { readonly [K in RuleConfigKind]: RuleConfigDefinition<K> } = {
  price_change: priceChange,
  price_level: priceLevel,
  variation,
  stale_price: stalePrice,
  low_sources: lowSources,
  component_deviation: componentDeviation,
  onchain_offchain_deviation: onchainOffchainDeviation,
  publisher_stale: publisherStale,
  publisher_missing: publisherMissing,
  funding_rate: fundingRate,
  vault_status: vaultStatus,
  vault_share_price: vaultSharePrice,
  upstream_error: upstreamError,
  upstream_down: upstreamDown,
  publisher_outage: publisherOutage,
  source_deviation: sourceDeviation,
  market_move: marketMove,
};

/** Read the `rules` array (raw JSON): each element validated strictly and completed with its kind's defaults. */
export function readRules(raw: unknown, problems: ConfigProblem[]): RuleConfig[] {
  const items = parseArray(raw, "rules", problems, (item, key) =>
    parseKinded<RuleConfigKind, RuleConfig>(RULE_DEFINITIONS, item, key, problems),
  );
  return reportDuplicates(
    items,
    "rules",
    problems,
    (r) => r.id,
    ".id",
    (id, first) => `duplicate id "${id}" (also ${first}); give each rule a distinct id`,
  );
}
