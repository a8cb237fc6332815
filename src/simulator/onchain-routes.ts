// Handlers of the on-chain endpoints (entry set, publishers) and the vault endpoint.
import { AGGREGATIONS, NETWORKS, PUBLISHER_TYPES, type Network } from "../domain/types.js";
import type { WireOnchainEntrySet, WirePublisher, WireVaultEnvelope } from "../upstream/wire.js";
import { variations } from "./candles.js";
import { toHexPrice } from "./format.js";
import type { Market } from "./market.js";
import {
  dailyUpdates,
  feedsOn,
  lastPush,
  onchainMedian,
  pairPushes,
  totalUpdates,
  type Push,
} from "./onchain.js";
import { boolParam, enumParam, intParam, requiredEnum, type Params } from "./query.js";
import { entryError, FUTURE_TIMESTAMP, JSON_TYPE, jsonOk, type SimResponse } from "./responses.js";
import { resolveRoute } from "./sources.js";
import { liveVaultBody, vaultAt } from "./vaults.js";

const ONCHAIN_DECIMALS_ROUTED = 8;

function decimalsOf(market: Market, pairId: string): number {
  return market.pairs.get(pairId)?.def.onchainDecimals ?? ONCHAIN_DECIMALS_ROUTED;
}

/** GET /node/v1/onchain/{base}/{quote}. */
export function handleOnchain(market: Market, base: string, quote: string, params: Params): SimResponse {
  const network = requiredEnum(params, "network", NETWORKS);
  // The spec gives no defaults for this endpoint, so they are the live server's (pragma-api-facts.md):
  // twap (which then fails with 500), no routing, components and variations included.
  const aggregation = enumParam(params, "aggregation", AGGREGATIONS, "twap");
  const routing = boolParam(params, "routing", false);
  const timestampS = intParam(params, "timestamp");
  const withComponents = boolParam(params, "components", true);
  const withVariations = boolParam(params, "variations", true);
  const nowMs = market.nowMs();
  const realNowMs = market.clock.nowMs();
  const pairId = `${base}/${quote}`;
  if (aggregation === "twap") {
    // The live server has no on-chain twap view and fails with a 500 (pragma-api-facts.md).
    return entryError(500, 'Database error: relation "twap_onchain_aggregate" does not exist', realNowMs);
  }
  if (timestampS !== null && timestampS * 1000 > nowMs) return entryError(400, FUTURE_TIMESTAMP, realNowMs);
  const atMs = timestampS === null ? nowMs : timestampS * 1000;
  const route = resolveRoute(market, base, quote, routing);
  if (route.kind === "missing") return entryError(404, route.message, realNowMs);
  const legs = route.kind === "direct" ? [route.pair, null] : [route.base, route.quote];
  const legPushes = legs.map((leg) =>
    leg === null ? null : pairPushes(market, network, leg.def.pairId, atMs),
  );
  if (legPushes.some((pushes) => pushes !== null && pushes.length === 0)) {
    return entryError(404, `Entry not found: ${pairId}`, realNowMs);
  }
  const [basePushes, quotePushes] = legPushes;
  const basePrice = basePushes === null || basePushes === undefined ? 1 : onchainMedian(basePushes);
  const quotePrice = quotePushes === null || quotePushes === undefined ? 1 : onchainMedian(quotePushes);
  const all: Push[] = legPushes.flatMap((pushes) => pushes ?? []);
  const decimals = route.kind === "direct" ? route.pair.def.onchainDecimals : ONCHAIN_DECIMALS_ROUTED;
  const body: WireOnchainEntrySet = {
    pair_id: pairId,
    last_updated_timestamp: Math.floor(Math.max(...all.map((push) => push.pushMs)) / 1000),
    price: toHexPrice(basePrice / quotePrice, decimals),
    decimals,
    // the live server counts the components ((publisher, source) pairs), across both legs when routed
    nb_sources_aggregated: all.length,
    asset_type: route.kind === "direct" ? route.pair.def.assetType : "Crypto",
    components: withComponents
      ? all.map((push) => ({
          publisher: push.publisher,
          source: push.source,
          price: toHexPrice(push.price, decimalsOf(market, push.pairId)),
          tx_hash: push.txHash,
          timestamp: Math.floor(push.pushMs / 1000),
        }))
      : null,
    variations: withVariations ? variations(market, route, atMs) : null,
  };
  return jsonOk(body);
}

/** GET /node/v1/onchain/publishers?network=...&data_type=Spot|Perp. */
export function handlePublishers(market: Market, params: Params): SimResponse {
  const network: Network = requiredEnum(params, "network", NETWORKS);
  const dataType = requiredEnum(params, "data_type", PUBLISHER_TYPES);
  const nowMs = market.nowMs();
  const byPublisher = new Map<string, WirePublisher>();
  for (const { publisher, feed } of feedsOn(market, network, dataType)) {
    const push = lastPush(market, network, publisher, feed, nowMs);
    if (push === null) continue;
    let entry = byPublisher.get(publisher.name);
    if (entry === undefined) {
      entry = {
        publisher: publisher.name,
        website_url: publisher.websiteUrl,
        last_updated_timestamp: 0,
        type: publisher.type,
        nb_feeds: 0,
        daily_updates: 0,
        total_updates: 0,
        components: [],
      };
      byPublisher.set(publisher.name, entry);
    }
    const pushS = Math.floor(push.pushMs / 1000);
    const daily = dailyUpdates(market, push, nowMs);
    const decimals = decimalsOf(market, feed.pairId);
    entry.components.push({
      pair_id: feed.pairId,
      last_updated_timestamp: pushS,
      price: toHexPrice(push.price, decimals),
      source: feed.source,
      decimals,
      daily_updates: daily,
    });
    entry.nb_feeds++;
    entry.daily_updates += daily;
    entry.total_updates += totalUpdates(market, push);
    entry.last_updated_timestamp = Math.max(entry.last_updated_timestamp, pushS);
  }
  return jsonOk([...byPublisher.values()].sort((a, b) => a.publisher.localeCompare(b.publisher)));
}

/** GET {vault}/api/v1/vaults/{id}: bare object by default, envelope when the scenario asks for it. */
export function handleVault(market: Market, vaultId: string, envelope: boolean): SimResponse {
  const vault = vaultId.length === 0 ? null : vaultAt(market, vaultId, market.nowMs());
  if (vault === null) {
    if (envelope) {
      const body: WireVaultEnvelope = { status: "error", msg: `Vault ${vaultId} not found` };
      return { status: 404, contentType: JSON_TYPE, body: JSON.stringify(body) };
    }
    return entryError(404, `Vault not found: ${vaultId}`, market.clock.nowMs(), "Vault");
  }
  const served = liveVaultBody(market.seed, vault);
  return jsonOk(envelope ? { status: "ok", data: served } : served);
}
