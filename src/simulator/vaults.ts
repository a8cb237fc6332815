// Vault metadata at a given instant: TVL and share price drift slowly; faults pause deposits or change status.
import type { WireVault } from "../upstream/wire.js";
import type { VaultDef } from "./catalog.js";
import type { Market } from "./market.js";
import { hashString, valueNoise } from "./random.js";

const MS_PER_YEAR = 365.25 * 86_400_000;

/** The vault's metadata body at `tMs`, or null for an unknown id. */
export function vaultAt(market: Market, vaultId: string, tMs: number): WireVault | null {
  const def: VaultDef | undefined = market.vaults.get(vaultId);
  if (def === undefined) return null;
  const stream = hashString(`vault|${def.id}`);
  const overrides = market.faults.vault(def.id, tMs);
  const status = overrides.status ?? (overrides.paused && def.status === "live" ? "paused" : def.status);
  const retired = status === "retired";
  const tvl = retired ? def.tvl : def.tvl * Math.exp(0.03 * valueNoise(market.seed, stream, tMs, 3_600_000));
  const yearsSinceStart = (tMs - market.startMs) / MS_PER_YEAR;
  const sharePrice =
    def.sharePrice *
    (1 + 0.07 * yearsSinceStart) *
    (1 + 0.0005 * valueNoise(market.seed, stream ^ 1, tMs, 600_000));
  const paused = overrides.paused || status !== "live";
  return {
    id: def.id,
    name: def.name,
    description: `${def.name}: delta-neutral ${def.baseAsset} yield strategy priced by Pragma oracles.`,
    inception_date: def.inceptionDate,
    chain: "starknet",
    chain_id: "SN_MAIN",
    symbol: def.symbol,
    base_asset: def.baseAsset,
    status,
    tvl: tvl.toFixed(2),
    share_price: sharePrice.toFixed(6),
    mgmt_fee_bps: 100,
    perf_fee_bps: 1000,
    strategy_brief: `Lends ${def.baseAsset} and hedges with perps; rebalances on oracle deviations.`,
    docs_url: `https://docs.pragma.build/vaults/${def.id}`,
    contract: {
      address: `0x0${(stream >>> 0).toString(16).padStart(8, "0")}${"a1b2c3d4".repeat(7)}`,
      abi_version: "2.1.0",
    },
    deposit_constraints: { min_deposit: "10", max_deposit: retired ? "0" : "1000000", paused },
    withdraw_constraints: {
      instant_liquidity: !retired,
      instant_slippage_max_bps: 30,
      redeem_24h_threshold_pct_of_aum: 10,
      redeem_48h_above_threshold: true,
    },
    icons: {
      light: `https://assets.pragma.build/vaults/${def.id}-light.svg`,
      dark: `https://assets.pragma.build/vaults/${def.id}-dark.svg`,
    },
  };
}
