// Config of the `price_level` rule: the price crosses a level; the user sets the level and the side.
import { oneOf } from "../fields.js";
import { defineRuleConfig, market } from "./common.js";

/** `price_level`: its defaults and its own keys. */
export const priceLevel = defineRuleConfig(
  "price_level",
  {
    unit: "price",
    threshold: undefined,
    severity: "warning",
    forMs: 0,
    clearFactor: 1,
    thresholdDoc: "the price level (quote units, e.g. 100000 for BTC/USD)",
  },
  {
    market: market(),
    direction: oneOf(["above", "below"], { doc: "Fire when the price is above or below the level." }),
  },
);
