// price_level: the latest price is above / below a configured level, compared exactly as scaled integers.
import { noData, type Measure } from "../finding.js";
import { numberToDecimalString, toIso } from "../format.js";
import { comparePrices, parseDecimalPrice, type ScaledPrice } from "../price.js";
import type { Market, RuleCommon } from "./common.js";
import { defineRule } from "./definition.js";

/** Price crosses a level: threshold is the level as a decimal number; direction says which side fires. */
export interface PriceLevelRule extends RuleCommon {
  readonly kind: "price_level";
  readonly direction: "above" | "below";
  readonly market: Market;
}

const NO_PRICE = noData("no comparable price");
const NO_LEVEL = noData("level not a finite number");

/** A configured level (a float from config) as an exact price: its shortest decimal text, never a binary expansion. */
export function levelToPrice(level: number): ScaledPrice | null {
  const text = numberToDecimalString(level);
  if (text === null) return null;
  const dot = text.indexOf(".");
  return parseDecimalPrice(text, dot < 0 ? 0 : text.length - dot - 1);
}

/** price_level on targets of its market; `price_level below` fires low. */
export const priceLevel = defineRule<PriceLevelRule>({
  appliesTo: (rule, target) => target.kind === rule.market,
  direction: (rule) => rule.direction,
  keys: "one",
  detect({ target, rule, scopeKey, settings }) {
    const price = target.price;
    if (price === null || !target.priceComparable) return NO_PRICE;
    const level = levelToPrice(settings.threshold);
    const clearLevel = levelToPrice(settings.clearThreshold);
    if (level === null || clearLevel === null) return NO_LEVEL;
    const above = rule.direction === "above";
    const toLevel = comparePrices(price, level);
    const toClear = comparePrices(price, clearLevel);
    const observedAtMs = target.observedAtMs;
    const measure: Measure = {
      kind: "measure",
      subKey: "",
      scopeKey,
      extraLabels: null,
      value: Number(price.raw) / 10 ** price.decimals,
      threshold: settings.threshold,
      severity: settings.severity,
      fires: above ? toLevel >= 0 : toLevel <= 0,
      clears: above ? toClear < 0 : toClear > 0,
      relatedTargetId: null,
      describe: () => ({
        summary: `${scopeKey} at ${price.text} is ${above ? "above" : "below"} ${level.text}`,
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
  },
});
