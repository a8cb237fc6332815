// Rule settings: the evaluator's shared settings (one object per rule and direction for keys without an override)
// always equal settingsFor of the key, overrides and hysteresis included.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  settingsFor,
  sharedSettingsFor,
  type Direction,
  type RuleSettings,
  type SettingsCache,
} from "../../src/domain/rule-scope.js";
import { rule } from "./helpers.js";

const KEYS = ["BTC/USD", "ETH/USD", "SOL/USD", "offchain:BTC/USD"];
const level = fc.double({ min: 0, max: 10, noNaN: true });
const override = fc.record(
  {
    threshold: level,
    clearThreshold: level,
    severity: fc.constantFrom("info", "warning", "critical"),
  },
  { requiredKeys: [] },
);

describe("sharedSettingsFor", () => {
  it("equals settingsFor for every key and direction, and shares one object between the keys without an override", () => {
    fc.assert(
      fc.property(
        level,
        level,
        fc.dictionary(fc.constantFrom(...KEYS), override),
        fc.array(fc.tuple(fc.constantFrom(...KEYS), fc.constantFrom<Direction>("above", "below")), {
          maxLength: 12,
        }),
        (threshold, clearThreshold, overrides, lookups) => {
          const common = rule(
            "low_sources",
            { market: "offchain" },
            { threshold, clearThreshold, overrides },
          );
          const cache: SettingsCache = new Map();
          const plain = new Map<Direction, RuleSettings>();
          for (const [key, direction] of lookups) {
            const shared = sharedSettingsFor(cache, common, key, direction);
            expect(shared).toEqual(settingsFor(common, key, direction));
            if (Object.hasOwn(overrides, key)) continue;
            const first = plain.get(direction) ?? shared;
            plain.set(direction, first);
            expect(shared).toBe(first);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
