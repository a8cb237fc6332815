// The ownership key: targets of one pair stay on one member (the cross-market rule compares them); others go alone.
import { describe, expect, it } from "vitest";
import { ownershipKey } from "../../src/cluster/cluster-mode.js";
import type { TargetSpec } from "../../src/domain/types.js";

describe("ownershipKey", () => {
  it("keys on-chain and off-chain targets of one pair alike, and a target without a pair by its id", () => {
    const offchain: TargetSpec = {
      kind: "offchain",
      id: "offchain:BTC/USD:spot:median:1s",
      pair: "BTC/USD",
      entryType: "spot",
      aggregation: "median",
      interval: "1s",
      expiry: null,
    };
    const onchain: TargetSpec = {
      kind: "onchain",
      id: "onchain:starknet-mainnet:BTC/USD:median",
      pair: "BTC/USD",
      network: "starknet-mainnet",
      aggregation: "median",
    };
    expect(ownershipKey(offchain)).toBe("pair:BTC/USD");
    expect(ownershipKey(onchain)).toBe(ownershipKey(offchain));
    expect(ownershipKey({ ...offchain, id: "offchain:ETH/USD:spot:median:1s", pair: "ETH/USD" })).not.toBe(
      ownershipKey(offchain),
    );
    const vault: TargetSpec = { kind: "vault", id: "vault:pragma-btc-vault", vaultId: "pragma-btc-vault" };
    expect(ownershipKey(vault)).toBe("vault:pragma-btc-vault");
  });
});
