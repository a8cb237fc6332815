// Public surface of the upstream client: the factory, the pool, the pure decoders and the contract types.
export { createPragmaClient, type PragmaClientOptions } from "./client.js";
export { createDispatcher, type DispatcherOptions } from "./dispatcher.js";
export type { RetryPolicy } from "./retry.js";
export { decodePairPrice, decodePairPriceBody } from "./pair-price.js";
export { decodeCandleSeries, decodeCandleSeriesBody } from "./candlestick.js";
export { decodeFundingRatePage, decodeFundingRatePageBody } from "./funding-rates.js";
export { decodeOnchainEntrySet, decodeOnchainEntrySetBody } from "./onchain.js";
export { decodeOnchainPublishers, decodeOnchainPublishersBody } from "./publishers.js";
export { decodeVault, decodeVaultBody } from "./vault.js";
export { parseJsonBody, type SkippedItem, type SkippedItemObserver } from "./decode.js";
export { parseUpstreamErrorBody } from "./error-body.js";
export type * from "./types.js";
