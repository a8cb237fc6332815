// The targets' ownership keys, indexed both ways: a key's targets are exactly those whose key it is.
import { describe, expect, it } from "vitest";
import { indexTargetKeys } from "../../src/cluster/target-keys.js";

describe("indexTargetKeys", () => {
  it("gives each target's key and each key's targets, in the order given", () => {
    const keys = indexTargetKeys([
      ["offchain:BTC/USD", "pair:BTC/USD"],
      ["vault:v1", "vault:v1"],
      ["onchain:BTC/USD", "pair:BTC/USD"],
    ]);
    expect(keys.keyOfTarget("onchain:BTC/USD")).toBe("pair:BTC/USD");
    expect(keys.keyOfTarget("offchain:ETH/USD")).toBeUndefined();
    expect(keys.targetsOfKey("pair:BTC/USD")).toEqual(["offchain:BTC/USD", "onchain:BTC/USD"]);
    expect(keys.targetsOfKey("vault:v1")).toEqual(["vault:v1"]);
    expect(keys.targetsOfKey("cause:")).toEqual([]);
  });

  it("agrees both ways when a target id is given twice (its last key)", () => {
    const keys = indexTargetKeys([
      ["t", "a"],
      ["u", "a"],
      ["t", "b"],
    ]);
    expect(keys.keyOfTarget("t")).toBe("b");
    expect(keys.targetsOfKey("a")).toEqual(["u"]);
    expect(keys.targetsOfKey("b")).toEqual(["t"]);
  });
});
