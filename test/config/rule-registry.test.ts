// The config's rule registry: one definition per kind, each held to the domain's RuleOf<K> by the compiler.
import { expect, it } from "vitest";
import { int, oneOf } from "../../src/config/fields.js";
import { defineRuleConfig, type RuleKindDefaults } from "../../src/config/rules/common.js";
import { RULE_DEFINITIONS } from "../../src/config/rules/index.js";
import { problemLines, loadWith } from "./helpers.js";

const defaults: RuleKindDefaults = {
  unit: "fraction",
  threshold: () => 0.1,
  severity: "warning",
  forMs: 0,
  clearFactor: 1,
  thresholdDoc: "a test threshold",
};

it("refuses to compile a kind whose keys drift from the domain's RuleOf<K> (checked by tsc in npm run check)", () => {
  const drifted = [
    // @ts-expect-error: a variation window the domain's Interval does not have
    defineRuleConfig("variation", defaults, {
      window: oneOf(["1h", "2x"], { doc: "Window.", default: "1h" }),
    }),
    // @ts-expect-error: a key the domain's vault_status does not have
    defineRuleConfig("vault_status", defaults, { extra: int({ doc: "Extra.", default: 1, min: 0, max: 2 }) }),
    // @ts-expect-error: publisher_missing without its publishers
    defineRuleConfig("publisher_missing", defaults, {}),
  ];
  expect(drifted.map((d) => d.kind)).toEqual(["variation", "vault_status", "publisher_missing"]);
});

it("keys every definition by its own kind", () => {
  for (const [kind, definition] of Object.entries(RULE_DEFINITIONS)) expect(definition.kind).toBe(kind);
});

it("suggests the closest kind for a misspelt one", () => {
  expect(problemLines(() => loadWith({ rules: [{ kind: "price_chnage" }] }, { defaultFile: null }))).toEqual([
    expect.stringMatching(
      /^rules\[0\]\.kind: must be one of .*, got "price_chnage" \(did you mean price_change\?\)$/,
    ),
  ]);
  expect(
    problemLines(() =>
      loadWith({ sinks: [{ kind: "slak", url: "https://h.example.com" }] }, { defaultFile: null }),
    ),
  ).toEqual([
    expect.stringMatching(/^sinks\[0\]\.kind: must be one of .*, got "slak" \(did you mean slack\?\)$/),
  ]);
});
