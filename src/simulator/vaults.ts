// Vault metadata at a given instant: TVL and share price drift slowly; faults pause deposits or change status.
import type { WireVault } from "../upstream/wire.js";
import type { VaultDef } from "./catalog.js";
import type { Market } from "./market.js";
import { hashString, uniform, valueNoise } from "./random.js";

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

/** How one optional vault field is served: as the model has it, absent, or null. */
type Presence = "present" | "absent" | "null";

/**
 * The fields the live vault API may leave absent or null (pragma-api-facts.md, "Vault metadata"):
 * every field of the spec's table but the ones it always sends and `deposit_constraints.paused`, which
 * the simulator keeps so its pause faults stay visible. Paths are dotted.
 */
const OPTIONAL_VAULT_FIELDS = [
  "description",
  "inception_date",
  "chain_id",
  "mgmt_fee_bps",
  "strategy_brief",
  "docs_url",
  "contract.abi_version",
  "deposit_constraints.min_deposit",
  "deposit_constraints.max_deposit",
  "withdraw_constraints.instant_liquidity",
  "withdraw_constraints.instant_slippage_max_bps",
  "withdraw_constraints.redeem_24h_threshold_pct_of_aum",
  "withdraw_constraints.redeem_48h_above_threshold",
  "icons.light",
  "icons.dark",
] as const;

/** Seeded presence of one optional field of one vault: half present, a quarter absent, a quarter null. */
function presenceOf(seed: number, vaultId: string, path: string): Presence {
  const draw = uniform(seed, hashString(`vault-field|${vaultId}|${path}`));
  return draw < 0.5 ? "present" : draw < 0.75 ? "absent" : "null";
}

/**
 * The body the vault endpoint serves: the model's vault with the live API's variety of absent and null
 * optional fields, a fractional redeem threshold and an extra field, all fixed per (seed, vault), so
 * clients meet the shapes the real API sends and the same seed always serves the same shape.
 */
export function liveVaultBody(seed: number, vault: WireVault): Record<string, unknown> {
  const body = structuredClone(vault) as unknown as Record<string, Record<string, unknown>>;
  const withdraw = body["withdraw_constraints"];
  if (withdraw !== undefined && uniform(seed, hashString(`vault-float|${vault.id}`)) < 0.5) {
    withdraw["redeem_24h_threshold_pct_of_aum"] = 5.5;
  }
  for (const path of OPTIONAL_VAULT_FIELDS) {
    const presence = presenceOf(seed, vault.id, path);
    if (presence === "present") continue;
    const [head, leaf] = path.split(".") as [string, string | undefined];
    const parent: Record<string, unknown> | undefined = leaf === undefined ? body : body[head];
    const key = leaf ?? head;
    if (parent === undefined) continue;
    if (presence === "absent") delete parent[key];
    else parent[key] = null;
  }
  return { ...body, api_endpoint: `/api/v1/vaults/${vault.id}` };
}
