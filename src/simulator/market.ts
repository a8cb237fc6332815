// The seeded market model: per-pair fractal random walks of the mid price, evaluated lazily at any instant.
import type { SimClock } from "./clock.js";
import {
  DEFAULT_PAIRS,
  DEFAULT_PUBLISHERS,
  DEFAULT_VAULTS,
  type PairDef,
  type PublisherDef,
  type VaultDef,
} from "./catalog.js";
import { FaultBook } from "./faults.js";
import { fractalWalk, hashString } from "./random.js";

/** Resolution of simulated time: every instant is floored to a 100 ms tick, so responses cache per tick. */
export const TICK_MS = 100;

/** How far back the market has data before simulator start by default (covers 1w variations). */
export const DEFAULT_HISTORY_MS = 15 * 86_400_000;

const MS_PER_YEAR = 365.25 * 86_400_000;

/** Optional overrides of the market's reference data and fault book. */
export interface MarketOptions {
  readonly pairs?: readonly PairDef[];
  readonly publishers?: readonly PublisherDef[];
  readonly vaults?: readonly VaultDef[];
  readonly faults?: FaultBook;
  readonly historyMs?: number;
}

/** A pair with its precomputed walk stream and offset (so its price at start is `startPrice`). */
export interface PairModel {
  readonly def: PairDef;
  readonly stream: number;
  readonly sigmaPerSqrtMs: number;
  readonly walkAtStart: number;
}

/** The market: reference data, time and faults; pure functions of (seed, faults, time) evaluate it. */
export interface Market {
  readonly seed: number;
  readonly clock: SimClock;
  /** Simulator start (scenario offsets count from here). */
  readonly startMs: number;
  /** First instant with data; earlier lookups find no entry. */
  readonly genesisMs: number;
  readonly faults: FaultBook;
  readonly pairs: ReadonlyMap<string, PairModel>;
  readonly publishers: readonly PublisherDef[];
  readonly vaults: ReadonlyMap<string, VaultDef>;
  /** Current simulated time floored to a tick. */
  nowMs(): number;
}

/** Build a deterministic market from a seed and a clock (its current time becomes the simulator start). */
export function createMarket(seed: number, clock: SimClock, options: MarketOptions = {}): Market {
  const startMs = floorToTick(clock.nowMs());
  const pairs = new Map<string, PairModel>();
  for (const def of options.pairs ?? DEFAULT_PAIRS) {
    const stream = hashString(def.pairId);
    pairs.set(def.pairId, {
      def,
      stream,
      sigmaPerSqrtMs: def.annualVol / Math.sqrt(MS_PER_YEAR),
      walkAtStart: fractalWalk(seed, stream, startMs),
    });
  }
  return {
    seed,
    clock,
    startMs,
    genesisMs: startMs - (options.historyMs ?? DEFAULT_HISTORY_MS),
    faults: options.faults ?? new FaultBook(startMs),
    pairs,
    publishers: options.publishers ?? DEFAULT_PUBLISHERS,
    vaults: new Map((options.vaults ?? DEFAULT_VAULTS).map((vault) => [vault.id, vault])),
    nowMs: () => floorToTick(clock.nowMs()),
  };
}

/** Floor a time to the model's tick. */
export function floorToTick(timeMs: number): number {
  return Math.floor(timeMs / TICK_MS) * TICK_MS;
}

/** Mid price of a directly quoted pair at `tMs` without faults. */
export function baseMid(market: Market, pair: PairModel, tMs: number): number {
  const walk = fractalWalk(market.seed, pair.stream, tMs) - pair.walkAtStart;
  return pair.def.startPrice * Math.exp(walk * pair.sigmaPerSqrtMs);
}

/** Mid price of a directly quoted pair at `tMs`, with spike/drift faults applied. */
export function midPrice(market: Market, pair: PairModel, tMs: number): number {
  return baseMid(market, pair, tMs) * market.faults.priceFactor(pair.def.pairId, tMs);
}
