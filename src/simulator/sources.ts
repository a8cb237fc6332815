// Off-chain sources: per-source quotes with own noise and cadence, median/twap aggregation and routing via USD.
import type { Aggregation, EntryType } from "../domain/types.js";
import { median } from "./format.js";
import { midPrice, type Market, type PairModel } from "./market.js";
import { gaussian, hashString, uniform } from "./random.js";

/** One source's latest update at or before the evaluated instant. */
export interface SourceQuote {
  readonly source: string;
  readonly price: number;
  readonly timestampMs: number;
}

/** Which entry to price and how. */
export interface OffchainSpec {
  readonly entryType: EntryType;
  /** Expiry of a future (unix ms); null for spot/perp. */
  readonly expiryMs: number | null;
  readonly aggregation: Aggregation;
  readonly intervalMs: number;
}

/** An aggregated off-chain price (float, formatted at the edge). */
export interface OffchainPrice {
  readonly pairId: string;
  readonly price: number;
  readonly numSources: number;
  readonly timestampMs: number;
  readonly components: readonly SourceQuote[];
}

/** How a requested pair is priced: directly, through USD, or not at all (with the 404 message). */
export type Route =
  | { readonly kind: "direct"; readonly pair: PairModel }
  | { readonly kind: "routed"; readonly base: PairModel | null; readonly quote: PairModel | null }
  | { readonly kind: "missing"; readonly message: string };

interface SourceTiming {
  readonly stream: number;
  readonly cadenceMs: number;
  readonly phaseMs: number;
  readonly bias: number;
}

const timingCache = new Map<string, SourceTiming>();

/** Cadence (1-3 s), phase and small persistent bias of a source on a pair, derived from names only. */
function timing(seed: number, pairId: string, source: string): SourceTiming {
  const key = `${seed}|${pairId}|${source}`;
  let cached = timingCache.get(key);
  if (cached === undefined) {
    const stream = hashString(`${pairId}#${source}`);
    const cadenceMs = 1_000 + (hashString(source) % 5) * 500;
    cached = {
      stream,
      cadenceMs,
      phaseMs: Math.floor(uniform(seed, stream, 1) * (cadenceMs / 100)) * 100,
      bias: (uniform(seed, stream, 2) - 0.5) * 4e-4,
    };
    if (timingCache.size > 10_000) timingCache.clear(); // bounded: only custom catalogs could grow it
    timingCache.set(key, cached);
  }
  return cached;
}

/** Time of a source's last update at or before `tMs` (frozen sources stop at their freeze instant). */
export function sourceUpdateMs(market: Market, pair: PairModel, source: string, tMs: number): number {
  const { cadenceMs, phaseMs } = timing(market.seed, pair.def.pairId, source);
  const frozenSinceMs = market.faults.sourceFrozenSinceMs(pair.def.pairId, source, tMs);
  const effectiveMs = frozenSinceMs === null ? tMs : Math.min(tMs, frozenSinceMs);
  return phaseMs + Math.floor((effectiveMs - phaseMs) / cadenceMs) * cadenceMs;
}

/** Price a source reports for an entry at its update instant `updateMs`. */
export function sourcePriceAt(
  market: Market,
  pair: PairModel,
  source: string,
  spec: Pick<OffchainSpec, "entryType" | "expiryMs">,
  updateMs: number,
): number {
  const { stream, bias } = timing(market.seed, pair.def.pairId, source);
  const noise = gaussian(market.seed, stream, updateMs / 100) * 2e-4 * Math.min(1, pair.def.annualVol * 2);
  let price = midPrice(market, pair, updateMs) * (1 + bias + noise);
  if (spec.entryType === "perp")
    price *= 1 + 3e-4 + gaussian(market.seed, stream ^ 0x5bd1e995, updateMs / 100) * 1e-4;
  if (spec.entryType === "future" && spec.expiryMs !== null) {
    price *= 1 + (0.05 * Math.max(0, spec.expiryMs - updateMs)) / (365.25 * 86_400_000);
  }
  return price;
}

/** Latest quote of every active (not dropped) source of a direct pair at `tMs`. */
export function sourceQuotes(
  market: Market,
  pair: PairModel,
  spec: Pick<OffchainSpec, "entryType" | "expiryMs">,
  tMs: number,
): SourceQuote[] {
  const quotes: SourceQuote[] = [];
  for (const source of pair.def.sources) {
    if (market.faults.sourceDropped(pair.def.pairId, source, tMs)) continue;
    const updateMs = sourceUpdateMs(market, pair, source, tMs);
    quotes.push({
      source,
      price: sourcePriceAt(market, pair, source, spec, updateMs),
      timestampMs: updateMs,
    });
  }
  return quotes;
}

const TWAP_SAMPLES = 8;

/** Aggregated price of a direct pair at `tMs`: median of latest quotes, or median of per-source TWAPs. */
export function directPrice(
  market: Market,
  pair: PairModel,
  spec: OffchainSpec,
  tMs: number,
): OffchainPrice | null {
  const latest = sourceQuotes(market, pair, spec, tMs);
  if (latest.length === 0) return null;
  let components: readonly SourceQuote[] = latest;
  if (spec.aggregation === "twap") {
    const sums = new Map<string, number>();
    for (let k = 0; k < TWAP_SAMPLES; k++) {
      const sampleMs = tMs - Math.floor((spec.intervalMs * k) / TWAP_SAMPLES);
      for (const quote of sourceQuotes(market, pair, spec, sampleMs)) {
        sums.set(quote.source, (sums.get(quote.source) ?? 0) + quote.price);
      }
    }
    components = latest.map((quote) => ({ ...quote, price: (sums.get(quote.source) ?? 0) / TWAP_SAMPLES }));
  }
  return {
    pairId: pair.def.pairId,
    price: median(components.map((quote) => quote.price)),
    numSources: components.length,
    timestampMs: Math.max(...components.map((quote) => quote.timestampMs)),
    components,
  };
}

/** Find how to price BASE/QUOTE: a direct pair, or (when routing) a cross through USD. */
export function resolveRoute(market: Market, base: string, quote: string, routing: boolean): Route {
  const pairId = `${base}/${quote}`;
  const direct = market.pairs.get(pairId);
  if (direct !== undefined) return { kind: "direct", pair: direct };
  const baseLeg = base === "USD" ? null : market.pairs.get(`${base}/USD`);
  const quoteLeg = quote === "USD" ? null : market.pairs.get(`${quote}/USD`);
  if (!routing) return { kind: "missing", message: `Entry not found: ${pairId}` };
  if (baseLeg === undefined || quoteLeg === undefined || base === quote) {
    // the live server's message once a lookup through intermediate pairs has failed
    return { kind: "missing", message: `Missing data for routing on pair: ${pairId}` };
  }
  return { kind: "routed", base: baseLeg, quote: quoteLeg };
}

/** Price a routed pair as base/USD ÷ quote/USD, combining the sources both legs share. */
export function routedPrice(
  market: Market,
  pairId: string,
  route: Extract<Route, { kind: "routed" }>,
  spec: OffchainSpec,
  tMs: number,
): OffchainPrice | null {
  const unit: OffchainPrice = {
    pairId: "USD/USD",
    price: 1,
    numSources: 1,
    timestampMs: tMs,
    components: [],
  };
  const base = route.base === null ? unit : directPrice(market, route.base, spec, tMs);
  const quote = route.quote === null ? unit : directPrice(market, route.quote, spec, tMs);
  if (base === null || quote === null) return null;
  const quoteBySource = new Map(quote.components.map((component) => [component.source, component]));
  const components: SourceQuote[] = [];
  for (const component of base.components) {
    const other =
      route.quote === null
        ? { price: 1, timestampMs: component.timestampMs }
        : quoteBySource.get(component.source);
    if (other === undefined) continue;
    components.push({
      source: component.source,
      price: component.price / other.price,
      timestampMs: Math.min(component.timestampMs, other.timestampMs),
    });
  }
  if (route.base === null) {
    for (const component of quote.components) {
      components.push({
        source: component.source,
        price: 1 / component.price,
        timestampMs: component.timestampMs,
      });
    }
  }
  return {
    pairId,
    price: base.price / quote.price,
    numSources:
      route.base === null
        ? quote.numSources
        : route.quote === null
          ? base.numSources
          : Math.min(base.numSources, quote.numSources),
    timestampMs: Math.min(base.timestampMs, quote.timestampMs),
    components,
  };
}

/** Price any resolvable route at `tMs`. */
export function routePrice(
  market: Market,
  pairId: string,
  route: Exclude<Route, { kind: "missing" }>,
  spec: OffchainSpec,
  tMs: number,
): OffchainPrice | null {
  return route.kind === "direct"
    ? directPrice(market, route.pair, spec, tMs)
    : routedPrice(market, pairId, route, spec, tMs);
}
