// Wire formats of the Pragma API exactly as JSON carries them; shared by the client's decoder and the simulator.

/** Off-chain pair price body. `timestamp` is ms on the live server, seconds in the spec. */
export interface WirePairPrice {
  pair_id: string;
  price: string;
  decimals: number;
  num_sources_aggregated: number;
  timestamp: number;
  components: WirePriceComponent[] | null;
}

export interface WirePriceComponent {
  source: string;
  price: string;
  timestamp: number;
}

export interface WireCandle {
  time: string;
  open: string;
  high: string;
  low: string;
  close: string;
}

export interface WireCandleSeries {
  pair_id: string;
  data: WireCandle[];
}

export interface WireFundingRate {
  pair: string;
  source: string;
  timestamp_ms: number;
  hourly_rate: number;
}

export interface WireFundingRatePage {
  data: WireFundingRate[];
  page: number;
  page_size: number;
  has_next_page: boolean;
}

export interface WireOnchainEntry {
  publisher: string;
  source: string;
  price: string;
  tx_hash: string;
  timestamp: number;
}

export interface WireOnchainEntrySet {
  pair_id: string;
  price: string;
  decimals: number;
  last_updated_timestamp: number;
  nb_sources_aggregated: number;
  asset_type: string;
  components: WireOnchainEntry[] | null;
  variations: Record<string, number> | null;
}

export interface WirePublisherComponent {
  pair_id: string;
  source: string;
  price: string;
  decimals: number;
  daily_updates: number;
  last_updated_timestamp: number;
}

export interface WirePublisher {
  publisher: string;
  website_url: string;
  type: number;
  nb_feeds: number;
  daily_updates: number;
  total_updates: number;
  last_updated_timestamp: number;
  components: WirePublisherComponent[];
}

export interface WireVault {
  id: string;
  name: string;
  description: string;
  inception_date: string;
  chain: string;
  chain_id: string;
  symbol: string;
  base_asset: string;
  status: string;
  tvl: string;
  share_price: string;
  mgmt_fee_bps: number;
  perf_fee_bps: number;
  strategy_brief: string;
  docs_url: string;
  contract: { address: string; abi_version: string };
  deposit_constraints: { min_deposit: string; max_deposit: string; paused: boolean };
  withdraw_constraints: {
    instant_liquidity: boolean;
    instant_slippage_max_bps: number;
    redeem_24h_threshold_pct_of_aum: number;
    redeem_48h_above_threshold: boolean;
  };
  icons: { light: string; dark: string };
}

/** Envelope of the vault API family: `{status:"ok",data}` or `{status:"error",msg}`. */
export type WireVaultEnvelope = { status: "ok"; data: WireVault } | { status: "error"; msg: string };

/** Error body of the candlestick / entry endpoints. */
export interface WireEntryError {
  resource: string;
  message: string;
  happened_at: string;
}

/** Path templates of the six endpoints (relative to the base URL or vault base URL). */
export const PATHS = {
  pairPrice: (base: string, quote: string) => `/node/v1/data/${base}/${quote}`,
  candlestick: (base: string, quote: string) => `/node/v1/aggregation/candlestick/${base}/${quote}`,
  fundingHistory: (base: string, quote: string) => `/node/v1/funding_rates/history/${base}/${quote}`,
  onchain: (base: string, quote: string) => `/node/v1/onchain/${base}/${quote}`,
  publishers: () => `/node/v1/onchain/publishers`,
  vault: (id: string) => `/api/v1/vaults/${encodeURIComponent(id)}`,
} as const;

/** Base path under which the simulator serves the vault API on its single port. */
export const SIMULATOR_VAULT_BASE_PATH = "/vault";
