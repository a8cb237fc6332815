// Domain types shared by the client, the simulator's model, the pipeline and the detectors: snapshots with units normalised.
import type { ScaledPrice } from "./price.js";

/** Interval strings the API accepts for aggregation and candles. */
export const INTERVALS = [
  "100ms",
  "1s",
  "5s",
  "10s",
  "1min",
  "5min",
  "15min",
  "1h",
  "2h",
  "1d",
  "1w",
] as const;
export type Interval = (typeof INTERVALS)[number];

/** Milliseconds per interval string. */
export const INTERVAL_MS: Readonly<Record<Interval, number>> = {
  "100ms": 100,
  "1s": 1_000,
  "5s": 5_000,
  "10s": 10_000,
  "1min": 60_000,
  "5min": 300_000,
  "15min": 900_000,
  "1h": 3_600_000,
  "2h": 7_200_000,
  "1d": 86_400_000,
  "1w": 604_800_000,
};

export const AGGREGATIONS = ["median", "twap"] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

export const ENTRY_TYPES = ["spot", "perp", "future"] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];

export const NETWORKS = ["starknet-mainnet", "starknet-sepolia"] as const;
export type Network = (typeof NETWORKS)[number];

export const PUBLISHER_TYPES = ["Spot", "Perp"] as const;
export type PublisherType = (typeof PUBLISHER_TYPES)[number];

export const FUNDING_FREQUENCIES = ["All", "Minute", "Hour"] as const;
export type FundingFrequency = (typeof FUNDING_FREQUENCIES)[number];

/** One source's contribution to an off-chain aggregate. */
export interface PriceComponent {
  readonly source: string;
  readonly price: ScaledPrice;
  readonly timestampMs: number;
}

/** Off-chain aggregated price of a pair (GET /node/v1/data). */
export interface PairPrice {
  readonly pairId: string;
  readonly price: ScaledPrice;
  readonly numSources: number;
  readonly timestampMs: number;
  readonly components: readonly PriceComponent[];
}

/** One OHLC bucket; prices are 18-decimal scaled integers. */
export interface Candle {
  readonly timeMs: number;
  readonly open: ScaledPrice;
  readonly high: ScaledPrice;
  readonly low: ScaledPrice;
  readonly close: ScaledPrice;
}

/** Candlestick series of a pair, newest first as the server sends it. */
export interface CandleSeries {
  readonly pairId: string;
  readonly candles: readonly Candle[];
}

/** One funding-rate observation; `hourlyRate` is a fraction per hour. */
export interface FundingRate {
  readonly pair: string;
  readonly source: string;
  readonly timestampMs: number;
  readonly hourlyRate: number;
}

/** One page of funding-rate history. */
export interface FundingRatePage {
  readonly hasNextPage: boolean;
  readonly page: number;
  readonly pageSize: number;
  readonly rates: readonly FundingRate[];
}

/** One on-chain publisher entry inside an on-chain entry set. */
export interface OnchainEntry {
  readonly publisher: string;
  readonly source: string;
  readonly price: ScaledPrice;
  readonly txHash: string;
  readonly timestampMs: number;
}

/** Variations keyed by interval, values are fractions (0.0217 = +2.17 %). */
export type Variations = Readonly<Partial<Record<Interval, number>>>;

/** On-chain aggregated price of a pair with its publisher entries (GET /node/v1/onchain). */
export interface OnchainEntrySet {
  readonly pairId: string;
  readonly price: ScaledPrice;
  /** False when the server returned `decimals: 0` (failed to read them): prices are then not comparable. */
  readonly decimalsKnown: boolean;
  readonly lastUpdatedMs: number;
  readonly numSources: number;
  readonly assetType: string;
  readonly components: readonly OnchainEntry[];
  readonly variations: Variations;
}

/** One feed (pair + source) pushed by an on-chain publisher. */
export interface PublisherFeed {
  readonly pairId: string;
  readonly source: string;
  readonly price: ScaledPrice;
  readonly decimalsKnown: boolean;
  readonly dailyUpdates: number;
  readonly lastUpdatedMs: number;
}

/** An on-chain publisher with its stats and feeds (GET /node/v1/onchain/publishers). */
export interface OnchainPublisher {
  readonly publisher: string;
  readonly websiteUrl: string;
  readonly type: number;
  readonly nbFeeds: number;
  readonly dailyUpdates: number;
  readonly totalUpdates: number;
  /** null when the server sent none: a publisher with no component of this data type. */
  readonly lastUpdatedMs: number | null;
  readonly feeds: readonly PublisherFeed[];
}

/**
 * Vault metadata (GET {vault}/api/v1/vaults/{id}); numeric strings kept as the server sent them.
 * The live vault API may leave any field but `id`, `status`, `tvl` and `sharePrice` absent or null:
 * those read as null here (unknown), never as a default that could pass for a real value.
 */
export interface Vault {
  readonly id: string;
  readonly name: string | null;
  readonly description: string | null;
  readonly inceptionDate: string | null;
  readonly chain: string | null;
  readonly chainId: string | null;
  readonly symbol: string | null;
  readonly baseAsset: string | null;
  /** `live`, `paused`, `retired` (lower case; the live API's `active` reads as `live`) or another value as sent. */
  readonly status: string;
  readonly tvl: string;
  readonly sharePrice: string;
  readonly mgmtFeeBps: number | null;
  readonly perfFeeBps: number | null;
  readonly strategyBrief: string | null;
  readonly docsUrl: string | null;
  readonly contract: { readonly address: string | null; readonly abiVersion: string | null };
  readonly depositConstraints: {
    readonly minDeposit: string | null;
    readonly maxDeposit: string | null;
    /** null when the server did not say (deposits neither known open nor known paused). */
    readonly paused: boolean | null;
  };
  readonly withdrawConstraints: {
    readonly instantLiquidity: boolean | null;
    readonly instantSlippageMaxBps: number | null;
    /** A percentage of AUM, possibly fractional (5.5). */
    readonly redeem24hThresholdPctOfAum: number | null;
    readonly redeem48hAboveThreshold: boolean | null;
  };
  readonly icons: { readonly light: string | null; readonly dark: string | null };
}

/** A monitored target: what one poll stream fetches. `id` is stable and unique (used as the `endpoint` label). */
export type TargetSpec =
  | {
      readonly kind: "offchain";
      readonly id: string;
      readonly pair: string;
      readonly entryType: EntryType;
      readonly aggregation: Aggregation;
      readonly interval: Interval;
      readonly expiry: string | null;
    }
  | {
      readonly kind: "onchain";
      readonly id: string;
      readonly pair: string;
      readonly network: Network;
      readonly aggregation: Aggregation;
    }
  | {
      readonly kind: "publishers";
      readonly id: string;
      readonly network: Network;
      readonly publisherType: PublisherType;
    }
  | { readonly kind: "funding"; readonly id: string; readonly pair: string; readonly source: string }
  | { readonly kind: "vault"; readonly id: string; readonly vaultId: string };
