// Funding-rate history: per (pair, exchange) hourly rates as slow value noise, sampled on a frequency grid and paged.
import type { FundingFrequency } from "../domain/types.js";
import type { WireFundingRate } from "../upstream/wire.js";
import { FUNDING_SOURCES } from "./catalog.js";
import type { Market } from "./market.js";
import { gaussian, hashString, valueNoise } from "./random.js";

/** Spacing of the data points of each frequency ("All" = every raw update, every 15 s). */
export const FUNDING_STEP_MS: Readonly<Record<FundingFrequency, number>> = {
  All: 15_000,
  Minute: 60_000,
  Hour: 3_600_000,
};

/** Whether funding rates exist for this pair and exchange. */
export function hasFunding(market: Market, pairId: string, source: string): boolean {
  return (
    market.pairs.get(pairId)?.def.hasDerivatives === true &&
    (FUNDING_SOURCES as readonly string[]).includes(source)
  );
}

/** Hourly funding rate (fraction per hour) of a pair on an exchange at `tMs`, with funding faults applied. */
export function hourlyRateAt(market: Market, pairId: string, source: string, tMs: number): number {
  const stream = hashString(`funding|${pairId}|${source}`);
  const annual =
    0.09 +
    valueNoise(market.seed, stream, tMs, 28_800_000) * 0.05 +
    gaussian(market.seed, stream, tMs / 60_000) * 0.004;
  const adjust = market.faults.funding(pairId, source, tMs);
  const rate = adjust.set ?? (annual / 8760) * adjust.factor;
  return Number(rate.toPrecision(5));
}

/** One page of the rates in [fromMs, toMs] at a frequency, oldest first, and whether more pages follow. */
export function fundingPage(
  market: Market,
  pairId: string,
  source: string,
  range: { readonly fromMs: number; readonly toMs: number },
  frequency: FundingFrequency,
  page: number,
  pageSize: number,
): { readonly data: WireFundingRate[]; readonly hasNextPage: boolean } {
  const stepMs = FUNDING_STEP_MS[frequency];
  const firstMs = Math.ceil(Math.max(range.fromMs, market.genesisMs) / stepMs) * stepMs;
  const lastMs = Math.floor(range.toMs / stepMs) * stepMs;
  const count = lastMs < firstMs ? 0 : (lastMs - firstMs) / stepMs + 1;
  const data: WireFundingRate[] = [];
  const endIndex = Math.min(count, page * pageSize);
  for (let index = (page - 1) * pageSize; index < endIndex; index++) {
    const timestampMs = firstMs + index * stepMs;
    data.push({
      pair: pairId,
      source,
      timestamp_ms: timestampMs,
      hourly_rate: hourlyRateAt(market, pairId, source, timestampMs),
    });
  }
  return { data, hasNextPage: page * pageSize < count };
}
