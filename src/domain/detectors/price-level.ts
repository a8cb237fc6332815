// price_level: the latest price is above / below a configured level, compared exactly as scaled integers.
import { numberToDecimalString, toIso } from "../format.js";
import { comparePrices, parseDecimalPrice, type ScaledPrice } from "../price.js";
import { settingsFor, targetScopeKey } from "../rule-scope.js";
import type { TargetData } from "../target-state.js";
import { noData, type Finding, type Measure, type RuleOf } from "./finding.js";

const levelCache = new Map<number, ScaledPrice | null>();

/** A configured level (a float from config) as an exact price: its shortest decimal text, never a binary expansion. */
export function levelToPrice(level: number): ScaledPrice | null {
  let price = levelCache.get(level);
  if (price === undefined) {
    const text = numberToDecimalString(level);
    const dot = text === null ? -1 : text.indexOf(".");
    price = text === null ? null : parseDecimalPrice(text, dot < 0 ? 0 : text.length - dot - 1);
    if (levelCache.size > 4096) levelCache.clear();
    levelCache.set(level, price);
  }
  return price;
}

/** Price ≥ level (above) or ≤ level (below); resolves once back past the clear level. */
export function detectPriceLevel(
  data: TargetData,
  rule: RuleOf<"price_level">,
  _nowMs: number,
): readonly Finding[] {
  const price = data.price;
  if (price === null || !data.priceComparable) return noData("no comparable price");
  const key = targetScopeKey(data.spec);
  const settings = settingsFor(rule, key);
  const level = levelToPrice(settings.threshold);
  const clearLevel = levelToPrice(settings.clearThreshold);
  if (level === null || clearLevel === null) return noData("level not a finite number");
  const above = rule.direction === "above";
  const toLevel = comparePrices(price, level);
  const toClear = comparePrices(price, clearLevel);
  const observedAtMs = data.observedAtMs;
  const measure: Measure = {
    kind: "measure",
    subKey: "",
    scopeKey: key,
    extraLabels: null,
    value: Number(price.raw) / 10 ** price.decimals,
    threshold: settings.threshold,
    severity: settings.severity,
    fires: above ? toLevel >= 0 : toLevel <= 0,
    clears: above ? toClear < 0 : toClear > 0,
    relatedTargetId: null,
    describe: () => ({
      summary: `${key} at ${price.text} is ${above ? "above" : "below"} ${level.text}`,
      context: {
        price: price.text,
        level: level.text,
        clearLevel: clearLevel.text,
        direction: rule.direction,
        observedAt: toIso(observedAtMs),
      },
    }),
  };
  return [measure];
}
