// Reference data of the simulated market: pairs, off-chain sources, on-chain publishers and feeds, funding sources, vaults.
import type { Network } from "../domain/types.js";

/** A directly quoted off-chain pair (always X/USD in the default catalog). */
export interface PairDef {
  readonly pairId: string;
  readonly startPrice: number;
  /** Annualised volatility as a fraction (0.6 = 60 %). */
  readonly annualVol: number;
  readonly sources: readonly string[];
  /** Decimals of the on-chain price. */
  readonly onchainDecimals: number;
  readonly assetType: string;
  /** Whether perp/future entries and funding rates exist for the pair. */
  readonly hasDerivatives: boolean;
}

/** An on-chain publisher and the feeds (pair + source) it pushes per network and data type. */
export interface PublisherDef {
  readonly name: string;
  readonly websiteUrl: string;
  readonly type: number;
  readonly feeds: readonly FeedDef[];
}

/** One pushed feed: a pair from a source, on some networks, spot or perp. */
export interface FeedDef {
  readonly pairId: string;
  readonly source: string;
  readonly networks: readonly Network[];
  readonly dataType: "Spot" | "Perp";
}

/** Static description of a vault; its TVL and share price drift with time. */
export interface VaultDef {
  readonly id: string;
  readonly name: string;
  readonly symbol: string;
  readonly baseAsset: string;
  readonly status: "live" | "paused" | "retired";
  readonly tvl: number;
  readonly sharePrice: number;
  readonly inceptionDate: string;
}

const MAJOR = ["BINANCE", "BYBIT", "COINBASE", "OKX", "KUCOIN"] as const;

/** Default pairs with realistic start prices and volatilities. */
export const DEFAULT_PAIRS: readonly PairDef[] = [
  pair("BTC/USD", 82_069.27, 0.6, [...MAJOR, "GATEIO"], 8, true),
  pair("ETH/USD", 2_034.12, 0.75, [...MAJOR, "GATEIO", "BITSTAMP"], 8, true),
  pair("SOL/USD", 127.45, 0.95, [...MAJOR], 8, true),
  pair("STRK/USD", 0.1734, 1.1, ["BINANCE", "BYBIT", "OKX", "KUCOIN", "EKUBO"], 8, true),
  pair("USDC/USD", 1.0001, 0.01, ["COINBASE", "KUCOIN", "OKX", "BITSTAMP", "PYTH"], 6, false),
  pair("USDT/USD", 0.9998, 0.01, ["KUCOIN", "OKX", "BITSTAMP", "MEXC", "HUOBI"], 6, false),
  { ...pair("EUR/USD", 1.0834, 0.08, ["PYTH", "BITSTAMP", "COINBASE"], 8, false), assetType: "Fiat" },
  { ...pair("XAU/USD", 2_912.5, 0.15, ["PYTH", "BITSTAMP", "COINBASE"], 8, false), assetType: "Commodity" },
];

function pair(
  pairId: string,
  startPrice: number,
  annualVol: number,
  sources: readonly string[],
  onchainDecimals: number,
  hasDerivatives: boolean,
): PairDef {
  return { pairId, startPrice, annualVol, sources, onchainDecimals, assetType: "Crypto", hasDerivatives };
}

const BOTH: readonly Network[] = ["starknet-mainnet", "starknet-sepolia"];
const MAINNET: readonly Network[] = ["starknet-mainnet"];

function feeds(
  pairs: readonly string[],
  sources: readonly string[],
  networks: readonly Network[],
  dataType: "Spot" | "Perp" = "Spot",
): FeedDef[] {
  return pairs.flatMap((pairId) => sources.map((source) => ({ pairId, source, networks, dataType })));
}

/** Default on-chain publishers (PRAGMA and SPACESHARD are first-party: type 1). */
export const DEFAULT_PUBLISHERS: readonly PublisherDef[] = [
  publisher("PRAGMA", "https://www.pragma.build/", 1, [
    ...feeds(["BTC/USD", "ETH/USD", "SOL/USD", "STRK/USD", "EUR/USD", "XAU/USD"], ["COINBASE"], BOTH),
    ...feeds(["USDC/USD", "USDT/USD"], ["OKX"], BOTH),
    ...feeds(["BTC/USD", "ETH/USD", "SOL/USD"], ["BINANCE"], BOTH, "Perp"),
  ]),
  publisher("AVNU", "https://www.avnu.fi/", 0, feeds(["ETH/USD", "STRK/USD", "USDC/USD"], ["AVNU"], MAINNET)),
  publisher("FOURLEAF", "https://www.fourleaf.network/", 0, [
    ...feeds(["BTC/USD", "ETH/USD"], ["BINANCE", "OKX"], BOTH),
    ...feeds(["SOL/USD", "USDT/USD"], ["KUCOIN"], MAINNET),
  ]),
  publisher("SPACESHARD", "https://www.spaceshard.io/", 1, feeds(["BTC/USD", "ETH/USD"], ["OKX"], MAINNET)),
  publisher("SKYNET_TRADING", "https://www.skynettrading.com/", 0, [
    ...feeds(["BTC/USD", "ETH/USD", "SOL/USD", "STRK/USD"], ["BYBIT"], MAINNET),
    ...feeds(["BTC/USD", "ETH/USD"], ["BYBIT"], MAINNET, "Perp"),
  ]),
  publisher(
    "FLOWDESK",
    "https://www.flowdesk.co/",
    0,
    feeds(["BTC/USD", "ETH/USD", "USDC/USD"], ["FLOWDESK"], MAINNET),
  ),
  publisher(
    "EQUILIBRIUM",
    "https://equilibrium.co/",
    0,
    feeds(["BTC/USD", "STRK/USD"], ["EQUILIBRIUM"], BOTH),
  ),
  publisher("ALENO", "https://aleno.ai/", 0, feeds(["BTC/USD", "ETH/USD", "EUR/USD"], ["ALENO"], MAINNET)),
  publisher(
    "KAIKO",
    "https://www.kaiko.com/",
    0,
    feeds(["XAU/USD", "EUR/USD", "USDC/USD"], ["KAIKO"], MAINNET),
  ),
];

function publisher(name: string, websiteUrl: string, type: number, list: readonly FeedDef[]): PublisherDef {
  return { name, websiteUrl, type, feeds: list };
}

/** Exchanges serving funding-rate history. */
export const FUNDING_SOURCES = ["HYPERLIQUID", "PARADEX", "KRAKEN", "EXTENDED", "BYBIT"] as const;

/** Default vaults: three live ones and a retired one. */
export const DEFAULT_VAULTS: readonly VaultDef[] = [
  vault("pragma-btc-vault", "Pragma BTC Vault", "pvBTC", "BTC", "live", 12_450_000, 1.0412, "2025-01-15"),
  vault("pragma-eth-vault", "Pragma ETH Vault", "pvETH", "ETH", "live", 8_730_000, 1.0287, "2025-02-01"),
  vault(
    "pragma-usdc-vault",
    "Pragma USDC Yield Vault",
    "pvUSDC",
    "USDC",
    "live",
    21_900_000,
    1.0631,
    "2024-11-20",
  ),
  vault(
    "pragma-legacy-vault",
    "Pragma Legacy Vault",
    "pvLEG",
    "STRK",
    "retired",
    41_250,
    0.9712,
    "2024-03-02",
  ),
];

function vault(
  id: string,
  name: string,
  symbol: string,
  baseAsset: string,
  status: VaultDef["status"],
  tvl: number,
  sharePrice: number,
  inceptionDate: string,
): VaultDef {
  return { id, name, symbol, baseAsset, status, tvl, sharePrice, inceptionDate };
}
