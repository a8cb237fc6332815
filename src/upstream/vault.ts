// GET {vault_base_url}/api/v1/vaults/{id}: the vault decoder, tolerant of the bare object, the {status,data} envelope and absent or null optional fields.
import { PmError } from "../domain/errors.js";
import type { Vault } from "../domain/types.js";
import {
  asObject,
  decodeWith,
  parseJsonBody,
  readLenientBoolean,
  readLenientNumber,
  readLenientObject,
  readLenientString,
  readNonEmptyString,
  readNullableBoolean,
  readString,
  withPrefix,
  type JsonObject,
} from "./decode.js";
import { validateVaultId } from "./validate.js";
import { PATHS } from "./wire.js";

/** Path of the vault endpoint for a validated id (relative to the vault base URL). */
export function vaultPath(vaultId: string): string {
  return PATHS.vault(validateVaultId(vaultId));
}

/** `active` is the live vault API's word for `live`; statuses are compared in lower case. */
function normaliseStatus(status: string): string {
  const lower = status.toLowerCase();
  return lower === "active" ? "live" : lower;
}

/** Where deposits stand: `deposit_constraints.paused` is judged (a boolean when sent), the limits are not. */
function decodeDepositConstraints(o: JsonObject): Vault["depositConstraints"] {
  const value = o["deposit_constraints"];
  if (value === undefined || value === null) return { minDeposit: null, maxDeposit: null, paused: null };
  const c = asObject(value, "deposit_constraints");
  try {
    return {
      minDeposit: readLenientString(c, "min_deposit"),
      maxDeposit: readLenientString(c, "max_deposit"),
      paused: readNullableBoolean(c, "paused"),
    };
  } catch (error) {
    throw withPrefix(error, "deposit_constraints");
  }
}

/**
 * Decode the bare vault object. What a monitor judges (`id`, `status`, `tvl`, `share_price`,
 * `deposit_constraints.paused`) is decoded strictly; every other field of the live vault API may be
 * absent, null or oddly typed (pragma-api-facts.md, "Vault metadata") and reads as null.
 */
function decodeVaultObject(o: JsonObject): Vault {
  const contract = readLenientObject(o, "contract");
  const withdraw = readLenientObject(o, "withdraw_constraints");
  const icons = readLenientObject(o, "icons");
  return {
    id: readNonEmptyString(o, "id"),
    name: readLenientString(o, "name"),
    description: readLenientString(o, "description"),
    inceptionDate: readLenientString(o, "inception_date"),
    chain: readLenientString(o, "chain"),
    chainId: readLenientString(o, "chain_id"),
    symbol: readLenientString(o, "symbol"),
    baseAsset: readLenientString(o, "base_asset"),
    status: normaliseStatus(readNonEmptyString(o, "status")),
    tvl: readString(o, "tvl"),
    sharePrice: readString(o, "share_price"),
    mgmtFeeBps: readLenientNumber(o, "mgmt_fee_bps"),
    perfFeeBps: readLenientNumber(o, "perf_fee_bps"),
    strategyBrief: readLenientString(o, "strategy_brief"),
    docsUrl: readLenientString(o, "docs_url"),
    contract: {
      address: readLenientString(contract, "address"),
      abiVersion: readLenientString(contract, "abi_version"),
    },
    depositConstraints: decodeDepositConstraints(o),
    withdrawConstraints: {
      instantLiquidity: readLenientBoolean(withdraw, "instant_liquidity"),
      instantSlippageMaxBps: readLenientNumber(withdraw, "instant_slippage_max_bps"),
      redeem24hThresholdPctOfAum: readLenientNumber(withdraw, "redeem_24h_threshold_pct_of_aum"),
      redeem48hAboveThreshold: readLenientBoolean(withdraw, "redeem_48h_above_threshold"),
    },
    icons: { light: readLenientString(icons, "light"), dark: readLenientString(icons, "dark") },
  };
}

/**
 * Decode a parsed vault body: the bare object (spec) or `{status:"ok",data}` (live API family).
 * `{status:"error",msg}` is an upstream error even with HTTP 200: PM_ERR_UPSTREAM_HTTP with body kind "vault".
 */
export function decodeVault(json: unknown): Vault {
  return decodeWith("vault", json, (value) => {
    const o = asObject(value, "body");
    // A bare vault's own status is live/paused/retired, never "ok"/"error", so the envelope is unambiguous.
    if (o["status"] === "ok" && "data" in o) {
      const data = asObject(o["data"], "data");
      try {
        return decodeVaultObject(data);
      } catch (error) {
        throw withPrefix(error, "data");
      }
    }
    if (o["status"] === "error") {
      const message = typeof o["msg"] === "string" ? o["msg"] : "error envelope without msg";
      throw new PmError("PM_ERR_UPSTREAM_HTTP", `vault: upstream error: ${message}`, {
        details: { endpoint: "vault", status: 200, body: { kind: "vault", message } },
      });
    }
    return decodeVaultObject(o);
  });
}

/** Parse and decode a vault response body text. */
export function decodeVaultBody(text: string): Vault {
  return decodeVault(parseJsonBody("vault", text));
}
