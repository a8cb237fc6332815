// GET {vault_base_url}/api/v1/vaults/{id}: the vault decoder, tolerant of the bare object and the {status,data} envelope.
import { PmError } from "../errors.js";
import type { Vault } from "../domain/types.js";
import {
  asObject,
  decodeWith,
  parseJsonBody,
  readBoolean,
  readCount,
  readNonEmptyString,
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

/** Decode a nested object field, prefixing failures with the field name. */
function nested<T>(o: JsonObject, key: string, decode: (inner: JsonObject) => T): T {
  const inner = asObject(o[key], key);
  try {
    return decode(inner);
  } catch (error) {
    throw withPrefix(error, key);
  }
}

/** Decode the bare vault object. */
function decodeVaultObject(o: JsonObject): Vault {
  return {
    id: readNonEmptyString(o, "id"),
    name: readString(o, "name"),
    description: readString(o, "description"),
    inceptionDate: readString(o, "inception_date"),
    chain: readString(o, "chain"),
    chainId: readString(o, "chain_id"),
    symbol: readString(o, "symbol"),
    baseAsset: readString(o, "base_asset"),
    status: readNonEmptyString(o, "status"),
    tvl: readString(o, "tvl"),
    sharePrice: readString(o, "share_price"),
    mgmtFeeBps: readCount(o, "mgmt_fee_bps"),
    perfFeeBps: readCount(o, "perf_fee_bps"),
    strategyBrief: readString(o, "strategy_brief"),
    docsUrl: readString(o, "docs_url"),
    contract: nested(o, "contract", (c) => ({
      address: readString(c, "address"),
      abiVersion: readString(c, "abi_version"),
    })),
    depositConstraints: nested(o, "deposit_constraints", (c) => ({
      minDeposit: readString(c, "min_deposit"),
      maxDeposit: readString(c, "max_deposit"),
      paused: readBoolean(c, "paused"),
    })),
    withdrawConstraints: nested(o, "withdraw_constraints", (c) => ({
      instantLiquidity: readBoolean(c, "instant_liquidity"),
      instantSlippageMaxBps: readCount(c, "instant_slippage_max_bps"),
      redeem24hThresholdPctOfAum: readCount(c, "redeem_24h_threshold_pct_of_aum"),
      redeem48hAboveThreshold: readBoolean(c, "redeem_48h_above_threshold"),
    })),
    icons: nested(o, "icons", (c) => ({ light: readString(c, "light"), dark: readString(c, "dark") })),
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
