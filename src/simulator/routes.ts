// Request routing: maps a path to one of the six endpoints (pair taken from the path) and runs its handler.
import { SIMULATOR_VAULT_BASE_PATH } from "../upstream/wire.js";
import type { EndpointKind } from "./faults.js";
import type { Market } from "./market.js";
import { handleCandlestick, handleFundingHistory, handlePairPrice } from "./offchain-routes.js";
import { handleOnchain, handlePublishers, handleVault } from "./onchain-routes.js";
import { parseParams, QueryRejection } from "./query.js";
import { MULTI_STREAM_PATH } from "./stream-routes.js";
import { entryError, plainText, queryRejection, type SimResponse } from "./responses.js";

/** A request matched to an endpoint; `pairId` is null for publishers and vault. */
export interface Matched {
  readonly endpoint: EndpointKind;
  readonly base: string;
  readonly quote: string;
  readonly pairId: string | null;
  /** Vault id (vault endpoint only). */
  readonly vaultId: string;
  /** Non-letter symbols are a server error upstream (500). */
  readonly badSymbols: boolean;
}

const PAIR_PREFIXES: readonly (readonly [string, EndpointKind])[] = [
  ["/node/v1/data/", "pair_price"],
  ["/node/v1/aggregation/candlestick/", "candlestick"],
  ["/node/v1/funding_rates/history/", "funding_rates"],
  ["/node/v1/onchain/", "onchain"],
];
const VAULT_PREFIX = `${SIMULATOR_VAULT_BASE_PATH}/api/v1/vaults/`;
const LETTERS = /^[A-Z]+$/;

function decode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** Match a path (without query) to an endpoint; null for unknown paths. */
export function matchPath(path: string): Matched | null {
  if (path === MULTI_STREAM_PATH) {
    return { endpoint: "multi_stream", base: "", quote: "", pairId: null, vaultId: "", badSymbols: false };
  }
  if (path === "/node/v1/onchain/publishers") {
    return { endpoint: "publishers", base: "", quote: "", pairId: null, vaultId: "", badSymbols: false };
  }
  if (path.startsWith(VAULT_PREFIX) || path === VAULT_PREFIX.slice(0, -1)) {
    const vaultId = decode(path.slice(VAULT_PREFIX.length)) ?? "";
    if (vaultId.includes("/")) return null;
    return { endpoint: "vault", base: "", quote: "", pairId: null, vaultId, badSymbols: false };
  }
  for (const [prefix, endpoint] of PAIR_PREFIXES) {
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length).split("/");
    if (rest.length !== 2) return null;
    const base = (decode(rest[0] ?? "") ?? "").toUpperCase();
    const quote = (decode(rest[1] ?? "") ?? "").toUpperCase();
    if (base.length === 0 || quote.length === 0) return null;
    const badSymbols = !LETTERS.test(base) || !LETTERS.test(quote);
    return { endpoint, base, quote, pairId: `${base}/${quote}`, vaultId: "", badSymbols };
  }
  return null;
}

/** Per-simulator options that change response shapes. */
export interface RouteOptions {
  readonly vaultEnvelope: boolean;
}

/** Run the handler of a matched request and render its response. */
export function dispatch(
  market: Market,
  matched: Matched,
  search: string,
  options: RouteOptions,
): SimResponse {
  if (matched.badSymbols) {
    return entryError(500, `Database error: invalid pair id ${matched.pairId ?? ""}`, market.clock.nowMs());
  }
  try {
    const params = parseParams(search);
    switch (matched.endpoint) {
      case "pair_price":
        return handlePairPrice(market, matched.base, matched.quote, params);
      case "candlestick":
        return handleCandlestick(market, matched.base, matched.quote, params);
      case "funding_rates":
        return handleFundingHistory(market, matched.base, matched.quote, params);
      case "onchain":
        return handleOnchain(market, matched.base, matched.quote, params);
      case "publishers":
        return handlePublishers(market, params);
      case "vault":
        return handleVault(market, matched.vaultId, options.vaultEnvelope);
      case "multi_stream":
        // served by the server's stream sessions, never through a rendered response
        return plainText(500, "the stream is not a rendered response");
    }
  } catch (error) {
    if (error instanceof QueryRejection) return queryRejection(error.message);
    throw error;
  }
}

/** Response for a path no endpoint serves (the live server's fallback text). */
export const NOT_FOUND: SimResponse = plainText(404, "The requested resource was not found");
