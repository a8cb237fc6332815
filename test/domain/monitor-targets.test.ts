// The target registry's pair count (pricePairs) always equals the distinct pairs of its price targets, through
// targets added, replaced under the same id with another pair or kind, and removed.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createTargetRegistry, ensureTarget, removeTarget } from "../../src/domain/monitor-targets.js";
import type { TargetSpec } from "../../src/domain/types.js";
import { BTC_OFF, BTC_ON, PUBS } from "./helpers.js";

const PAIRS = ["BTC/USD", "ETH/USD", "SOL/USD"];
const IDS = ["a", "b", "c", "d"];

// A price target (off-chain spot or perp, on-chain) or a publishers target under one of a few ids.
const spec: fc.Arbitrary<TargetSpec> = fc
  .tuple(
    fc.constantFrom(...IDS),
    fc.constantFrom(...PAIRS),
    fc.constantFrom("spot", "perp", "onchain", "pubs"),
  )
  .map(([id, pair, kind]): TargetSpec => {
    if (kind === "onchain") return { ...BTC_ON, id, pair };
    if (kind === "pubs") return { ...PUBS, id };
    return { ...BTC_OFF, id, pair, entryType: kind };
  });

const op = fc.oneof(
  spec.map((s) => ({ add: s })),
  fc.constantFrom(...IDS).map((id) => ({ remove: id })),
);

describe("TargetRegistry.pricePairs", () => {
  it("counts each pair of the price targets held, whatever was added, replaced or removed before", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const registry = createTargetRegistry();
        for (const step of ops) {
          if ("add" in step) ensureTarget(registry, step.add, 0);
          else removeTarget(registry, step.remove);
          const expected = new Map<string, number>();
          for (const { spec: held } of registry.byId.values())
            if (held.kind === "offchain" || held.kind === "onchain")
              expected.set(held.pair, (expected.get(held.pair) ?? 0) + 1);
          expect(new Map([...registry.pricePairs].sort())).toEqual(new Map([...expected].sort()));
        }
      }),
      { numRuns: 300 },
    );
  });
});
