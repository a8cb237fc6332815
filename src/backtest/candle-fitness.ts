// Which rules a backtest from candlesticks can decide, and how well: candles carry one OHLC per bucket of a
// spot median pair and nothing else (no source times, sources, components, publishers, on-chain data, vaults,
// funding or the live API's failures).
import type { RuleConfig } from "../domain/rules/index.js";
import { formatWindowMs } from "../domain/format.js";

/**
 * How a rule is decided from candles. None is exact: the daemon compares prices it polled between candle
 * boundaries, which candles only bound (high/low).
 */
export type CandleVerdict =
  | { readonly verdict: "approximate"; readonly reason: string }
  | { readonly verdict: "not backtestable from candles"; readonly reason: string };

const NOT = "not backtestable from candles" as const;

/** How `rule` is decided from candles of `candleMs` (exhaustive over the rule kinds). */
export function candleFitness(rule: RuleConfig, candleMs: number): CandleVerdict {
  switch (rule.kind) {
    case "price_change":
      return priceWindowVerdict(rule.market, rule.windowMs, candleMs);
    case "market_move":
      return {
        verdict: "approximate",
        reason: "decided on price_change conditions, which candles give per bucket (open, high, low, close)",
      };
    case "price_level":
      if (rule.market !== "offchain") return { verdict: NOT, reason: "on-chain prices are not in candles" };
      return {
        verdict: "approximate",
        reason: "a crossing is seen on the candle's high/low; when within the candle it happened is unknown",
      };
    case "variation":
    case "onchain_offchain_deviation":
      return { verdict: NOT, reason: "on-chain data are not in candles" };
    case "stale_price":
      return { verdict: NOT, reason: "candles carry no source timestamps, so no staleness" };
    case "low_sources":
    case "source_deviation":
      return { verdict: NOT, reason: "candles carry no sources" };
    case "component_deviation":
      return { verdict: NOT, reason: "candles carry no components" };
    case "publisher_stale":
    case "publisher_missing":
    case "publisher_outage":
      return { verdict: NOT, reason: "publishers are not in candles" };
    case "funding_rate":
      return { verdict: NOT, reason: "funding rates are not in candles" };
    case "vault_status":
    case "vault_share_price":
      return { verdict: NOT, reason: "vaults are not in candles" };
    case "upstream_error":
    case "upstream_down":
      return { verdict: NOT, reason: "candles say nothing of the live API's failures" };
  }
}

/** A price window rule: off-chain only; shorter than a candle, it is decided on the candle's high/low. */
function priceWindowVerdict(market: string, windowMs: number, candleMs: number): CandleVerdict {
  if (market !== "offchain") return { verdict: NOT, reason: "on-chain prices are not in candles" };
  if (windowMs < candleMs)
    return {
      verdict: "approximate",
      reason: `window ${formatWindowMs(windowMs)} shorter than a ${formatWindowMs(candleMs)} candle: decided on the candle's high/low`,
    };
  return {
    verdict: "approximate",
    reason: "prices between a candle's open, high, low and close are unknown",
  };
}
