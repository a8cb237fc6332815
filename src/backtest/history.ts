// The history mode of a backtest: off-chain pairs' candles fetched page by page, turned into prices and fed through
// the daemon's engine (replay.ts) with only the rules candles can decide.
import type { RuleConfig } from "../domain/rules/index.js";
import type { Candle, TargetSpec } from "../domain/types.js";
import { planTargets } from "../pipeline/targets.js";
import { canWarmUp } from "../pipeline/warmup.js";
import { readCandleRange } from "./candle-pages.js";
import { candleFitness, type CandleVerdict } from "./candle-fitness.js";
import { candlePoint, POINTS_PER_CANDLE } from "./candle-prices.js";
import {
  advanceReplay,
  feedPrice,
  finish,
  openReplay,
  type ReplayConfig,
  type ReplayProblem,
  type ReplayResult,
} from "./replay.js";

/** The time range and candle size of a history run. */
export interface CandleRange {
  readonly fromMs: number;
  readonly toMs: number;
  readonly candleMs: number;
}

/** One page of a pair's candles ending with the bucket holding `atMs`, newest first (the candlestick endpoint). */
export type PairCandleReader = (pair: string, atMs: number) => Promise<readonly Candle[]>;

/** A configured target the candles cannot feed, and why. */
export interface SkippedTarget {
  readonly target: string;
  readonly reason: string;
}

/** What the fetch brought: candles per pair (oldest first) and the problems met. */
export interface CandleHistory {
  readonly candles: ReadonlyMap<string, readonly Candle[]>;
  readonly problems: readonly ReplayProblem[];
}

/** A rule's candle verdict with its id (the report's first table). */
export type RuleVerdict = CandleVerdict & { readonly rule: string; readonly kind: string };

/** The off-chain targets of a config, split into those candles feed (spot medians) and the others. */
export function candleTargets(config: Pick<ReplayConfig, "monitors">): {
  readonly fed: readonly Extract<TargetSpec, { kind: "offchain" }>[];
  readonly skipped: readonly SkippedTarget[];
} {
  const fed: Extract<TargetSpec, { kind: "offchain" }>[] = [];
  const skipped: SkippedTarget[] = [];
  for (const { spec } of planTargets(config.monitors)) {
    if (spec.kind !== "offchain")
      skipped.push({ target: spec.id, reason: `${spec.kind} targets are not in candles` });
    else if (!canWarmUp(spec)) skipped.push({ target: spec.id, reason: "candles are spot medians only" });
    else fed.push(spec);
  }
  return { fed, skipped };
}

/**
 * Fetch the candles of every pair `targets` name over `range`, one pair after another; a pair with none (an
 * unknown pair, or a range outside its history) or a failed fetch is a problem naming it, and the others go on.
 */
export async function fetchCandleHistory(
  readPage: PairCandleReader,
  targets: readonly { readonly pair: string }[],
  range: CandleRange,
  onPair?: (done: number, total: number) => void,
): Promise<CandleHistory> {
  const pairs = [...new Set(targets.map((t) => t.pair))].sort();
  const candles = new Map<string, readonly Candle[]>();
  const problems: ReplayProblem[] = [];
  for (const [index, pair] of pairs.entries()) {
    try {
      const series = await readCandleRange((atMs) => readPage(pair, atMs), range.fromMs, range.toMs);
      if (series.length > 0) candles.set(pair, series);
      else problems.push(noCandles(pair, range, (await readPage(pair, Date.now())).length === 0));
    } catch (error) {
      const message = `cannot fetch the candles of ${pair}: ${error instanceof Error ? error.message : String(error)}`;
      problems.push({ kind: "candles", message, target: pair });
    }
    onPair?.(index + 1, pairs.length);
  }
  return { candles, problems };
}

/** The problem of a pair without candles in the range; `unknown` when the API has none of it at all. */
function noCandles(pair: string, range: CandleRange, unknown: boolean): ReplayProblem {
  const span = `${new Date(range.fromMs).toISOString()} → ${new Date(range.toMs).toISOString()}`;
  const message = unknown
    ? `the API has no candles of ${pair} at all (an unknown pair?): its targets are skipped`
    : `the API has no candles of ${pair} for ${span}: its targets are skipped`;
  return { kind: "candles", message, target: pair };
}

/** Each rule's verdict for candles of `candleMs`, in config order. */
export function ruleVerdicts(rules: readonly RuleConfig[], candleMs: number): RuleVerdict[] {
  return rules.map((rule) => ({ rule: rule.id, kind: rule.kind, ...candleFitness(rule, candleMs) }));
}

/**
 * Feed the candles through the engine under `config` with only the rules candles decide, in virtual time over
 * `range`: per bucket, every pair's open, then its first extreme, its second, its close (candle-prices.ts).
 */
export function replayCandles(
  history: CandleHistory,
  config: ReplayConfig,
  range: CandleRange,
  onProgress?: (atMs: number) => void,
  keepPrices = false,
): ReplayResult {
  const decidable = new Set(
    ruleVerdicts(config.rules, range.candleMs)
      .filter((v) => v.verdict !== "not backtestable from candles")
      .map((v) => v.rule),
  );
  const runConfig: ReplayConfig = {
    ...config,
    rules: config.rules.filter((rule) => decidable.has(rule.id)),
    upstream: { transport: "poll" },
  };
  const { fed } = candleTargets(config);
  const targetsOf = new Map<string, string[]>();
  for (const spec of fed)
    if (history.candles.has(spec.pair))
      targetsOf.set(spec.pair, [...(targetsOf.get(spec.pair) ?? []), spec.id]);
  const replay = openReplay(
    runConfig,
    {
      targets: (spec) => spec.kind === "offchain" && targetsOf.has(spec.pair),
      tickMs: candleTickMs(range.candleMs),
      keepPrices,
    },
    range.fromMs,
    [...history.problems],
  );
  for (const [bucketMs, bucket] of byBucket(history.candles)) {
    for (let index = 0; index < POINTS_PER_CANDLE; index++)
      for (const [pair, candle] of bucket) {
        const point = candlePoint(pair, candle, range.candleMs, index);
        for (const id of targetsOf.get(pair) ?? []) feedPrice(replay, id, point.price, point.atMs);
      }
    onProgress?.(bucketMs);
  }
  advanceReplay(replay, range.toMs);
  return finish(replay);
}

/**
 * How often the engine's time-driven steps (a rule's `for`, repeats, hold-downs) run between candle prices: every
 * twelfth of a candle, at least every second (5 s for 1 min candles). The prices themselves come four to a
 * candle, so a finer tick would only repeat the same verdicts; it would cost a week of 1 min candles 600 000 ticks.
 */
export function candleTickMs(candleMs: number): number {
  return Math.max(1_000, Math.floor(candleMs / 12));
}

/** The candles grouped by bucket start, buckets in time order and pairs in name order within one. */
function byBucket(candles: ReadonlyMap<string, readonly Candle[]>): [number, [string, Candle][]][] {
  const buckets = new Map<number, [string, Candle][]>();
  for (const pair of [...candles.keys()].sort())
    for (const candle of candles.get(pair) ?? []) {
      let bucket = buckets.get(candle.timeMs);
      if (bucket === undefined) buckets.set(candle.timeMs, (bucket = []));
      bucket.push([pair, candle]);
    }
  return [...buckets].sort(([a], [b]) => a - b);
}
