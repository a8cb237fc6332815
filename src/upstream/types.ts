// The upstream client's public contract: query shapes and the PragmaClient interface (one method per endpoint).
import type {
  Aggregation,
  CandleSeries,
  EntryType,
  FundingFrequency,
  FundingRate,
  FundingRatePage,
  Interval,
  Network,
  OnchainEntrySet,
  OnchainPublisher,
  PairPrice,
  PublisherType,
  Vault,
} from "../domain/types.js";

/** Options of GET /node/v1/data/{base}/{quote}. Unset fields are sent with the spec's defaults. */
export interface PairPriceQuery {
  /** "BASE/QUOTE", letters only; upper-cased before sending. */
  readonly pair: string;
  /** Historical lookup: unix seconds; omitted = latest. Only valid with median aggregation. */
  readonly timestampS?: number;
  readonly interval?: Interval;
  readonly routing?: boolean;
  readonly aggregation?: Aggregation;
  readonly entryType?: EntryType;
  /** Only with entryType "future": `YYYY-MM-DDTHH:MM:SS` in UTC, the one form the live server parses. */
  readonly expiry?: string;
  readonly withComponents?: boolean;
}

/**
 * Options of GET /node/v1/aggregation/candlestick/{base}/{quote}. Only the candle views the live server
 * has are accepted (interval 10s, 1min, 15min, 1h or 1d, default 1h; entry type spot), see server-rules.ts.
 */
export type CandlestickQuery = PairPriceQuery;

/** Options of GET /node/v1/funding_rates/history/{base}/{quote}. */
export interface FundingRateQuery {
  readonly pair: string;
  /** Exchange, e.g. HYPERLIQUID. */
  readonly source: string;
  /** Range in unix seconds (sent as `timestamp=START,END`); omitted = whole history. */
  readonly rangeS?: { readonly start: number; readonly end: number };
  readonly frequency?: FundingFrequency;
  /** 1-based. */
  readonly page?: number;
  /** 1..1000. */
  readonly pageSize?: number;
}

/** Options of GET /node/v1/onchain/{base}/{quote}. */
export interface OnchainQuery {
  readonly pair: string;
  readonly network: Network;
  readonly aggregation?: Aggregation;
  readonly routing?: boolean;
  readonly timestampS?: number;
  readonly components?: boolean;
  readonly variations?: boolean;
}

/** Options of GET /node/v1/onchain/publishers. */
export interface PublishersQuery {
  readonly network: Network;
  readonly publisherType: PublisherType;
}

/** Per-call options. */
export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Overrides the client's per-request timeout. */
  readonly timeoutMs?: number;
}

/** Per-call options of a candlestick request. */
export interface CandleCallOptions extends CallOptions {
  /** Keep only the candles whose bucket starts at or after this (ms), e.g. a warm-up's look-back; unset = all. */
  readonly sinceMs?: number;
}

/** Typed client of the six Pragma endpoints; every method rejects with a PmError. */
export interface PragmaClient {
  getPairPrice(query: PairPriceQuery, options?: CallOptions): Promise<PairPrice>;
  getCandlesticks(query: CandlestickQuery, options?: CandleCallOptions): Promise<CandleSeries>;
  getFundingRates(query: FundingRateQuery, options?: CallOptions): Promise<FundingRatePage>;
  /** Every funding rate of every page, fetched page by page as the caller iterates. */
  iterateFundingRates(query: FundingRateQuery, options?: CallOptions): AsyncIterable<FundingRate>;
  getOnchainEntry(query: OnchainQuery, options?: CallOptions): Promise<OnchainEntrySet>;
  getOnchainPublishers(query: PublishersQuery, options?: CallOptions): Promise<readonly OnchainPublisher[]>;
  getVault(vaultId: string, options?: CallOptions): Promise<Vault>;
}

/** Observes each HTTP attempt (for metrics); called once per attempt, success or not. */
export type RequestObserver = (sample: {
  readonly endpoint: EndpointName;
  readonly durationMs: number;
  readonly status: number | null;
  readonly errorCode: string | null;
}) => void;

/** Told of each HTTP attempt with its raw outcome (the recorder): status and body, or the error code of no response. */
export type ResponseObserver = (sample: {
  readonly endpoint: EndpointName;
  readonly url: string;
  readonly durationMs: number;
  readonly status: number | null;
  readonly errorCode: string | null;
  readonly body: string | null;
}) => void;

/** The upstream endpoints, as metric labels and fault filters name them (`multi_stream`: the SSE price stream). */
export type EndpointName =
  "pair_price" | "candlestick" | "funding_rates" | "onchain" | "publishers" | "vault" | "multi_stream";
