// Which rules a candle backtest can decide: every rule kind gets a verdict and a reason.
import { describe, expect, it } from "vitest";
import { candleFitness } from "../../src/backtest/candle-fitness.js";
import type { RuleConfig } from "../../src/domain/rules/index.js";
import { loadConfig } from "../../src/config/load.js";
import { RULE_DEFINITIONS } from "../../src/config/rules/index.js";

const MINUTE_MS = 60_000;

/** Every rule kind with its defaults, as the config loader builds them. */
function everyRule(): readonly RuleConfig[] {
  const required: Record<string, object> = {
    price_level: { direction: "above", threshold: 1 },
    publisher_missing: { publishers: ["FOURLEAF"] },
  };
  const rules = Object.keys(RULE_DEFINITIONS).map((kind) => ({ kind, ...required[kind] }));
  return loadConfig({ env: {}, defaultFile: null, argvOverrides: { rules: JSON.stringify(rules) } }).config
    .rules;
}

describe("candleFitness", () => {
  it("gives every rule kind a verdict with a reason, price rules approximate and the rest not backtestable", () => {
    const verdicts = Object.fromEntries(
      everyRule().map((rule) => [rule.kind, candleFitness(rule, MINUTE_MS)]),
    );
    expect(Object.keys(verdicts).sort()).toEqual(Object.keys(RULE_DEFINITIONS).sort());
    for (const v of Object.values(verdicts)) expect(v.reason.length).toBeGreaterThan(10);
    expect(verdicts["price_change"]?.verdict).toBe("approximate");
    expect(verdicts["price_level"]?.verdict).toBe("approximate");
    expect(verdicts["market_move"]?.verdict).toBe("approximate");
    for (const kind of [
      "stale_price",
      "low_sources",
      "publisher_stale",
      "vault_status",
      "variation",
      "upstream_error",
    ])
      expect(verdicts[kind]?.verdict).toBe("not backtestable from candles");
  });

  it("says when a window is shorter than a candle", () => {
    const [rule] = loadConfig({
      env: {},
      defaultFile: null,
      argvOverrides: { rules: JSON.stringify([{ kind: "price_change", windowMs: 10_000 }]) },
    }).config.rules;
    expect(rule && candleFitness(rule, MINUTE_MS)).toEqual({
      verdict: "approximate",
      reason: "window 10s shorter than a 1min candle: decided on the candle's high/low",
    });
    expect(rule && candleFitness({ ...rule, market: "onchain" } as RuleConfig, MINUTE_MS).verdict).toBe(
      "not backtestable from candles",
    );
  });
});
