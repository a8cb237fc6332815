// Warms a target's price history from candlesticks at start, so windowed rules work from the first minute.
import type { MonitorsConfig } from "../config/types.js";
import { createEvaluator, type TargetRules } from "../domain/evaluator.js";
import { formatWindowMs, listNames } from "../domain/format.js";
import type { RuleConfig } from "../domain/rules/index.js";
import type { CandleSeries, Interval, TargetSpec } from "../domain/types.js";
import { INTERVAL_MS } from "../domain/types.js";
import type { ScaledPrice } from "../domain/price.js";
import { candlesWarmAWindow, keptCloseSpacingMs } from "../domain/window-reference.js";
import type { PragmaClient } from "../upstream/types.js";
import { planTargets } from "./targets.js";

/** A past price point: the close of a candle, at the end of its bucket. */
export interface WarmupPoint {
  readonly atMs: number;
  readonly price: ScaledPrice;
}

/** Candle closes within `lookbackMs` before `nowMs`, oldest first. */
export function candlesToHistory(
  series: CandleSeries,
  interval: Interval,
  lookbackMs: number,
  nowMs: number,
): WarmupPoint[] {
  const bucketMs = INTERVAL_MS[interval];
  const points: WarmupPoint[] = [];
  for (const candle of series.candles) {
    const atMs = candle.timeMs + bucketMs;
    if (atMs <= nowMs && atMs >= nowMs - lookbackMs) points.push({ atMs, price: candle.close });
  }
  return points.sort((a, b) => a.atMs - b.atMs);
}

/**
 * The earliest bucket start whose close candlesToHistory keeps (a close is at its bucket's end): the bound the
 * candle decoder reads down to, so it decodes the look-back's candles only, not all 10 000 of a body.
 */
export function warmupSinceMs(interval: Interval, lookbackMs: number, nowMs: number): number {
  return nowMs - lookbackMs - INTERVAL_MS[interval];
}

/**
 * Whether candles can warm a target's history: the candlestick endpoint serves spot medians only, so a
 * perp, future or twap target warmed from them would compare its own prices with another market's.
 */
export function canWarmUp(spec: Extract<TargetSpec, { kind: "offchain" }>): boolean {
  return spec.entryType === "spot" && spec.aggregation === "median";
}

/**
 * Why candles of `interval` would not warm an off-chain target's history under its rules (the evaluator's, so the
 * windows and retention its detectors judge with), or null when they would: it is not a spot median (canWarmUp),
 * no rule reads a window of its history, or no window is longer than the time between the candle closes its history
 * keeps (candlesWarmAWindow: closes could serve such a window at most until its own polls do, a window later, so a
 * start, reload or cluster adoption would fetch and decode a body for at most one close spacing of verdicts).
 */
export function warmupSkip(
  spec: Extract<TargetSpec, { kind: "offchain" }>,
  rules: Pick<TargetRules, "windowsMs" | "retainMs">,
  interval: Interval,
): WarmupSkip | null {
  if (!canWarmUp(spec)) return "not_spot_median";
  if (rules.windowsMs.length === 0) return "no_window";
  return candlesWarmAWindow(rules.windowsMs, rules.retainMs, INTERVAL_MS[interval])
    ? null
    : "windows_too_short";
}

/** Why a target is not warmed from candles (warmupSkip). */
export type WarmupSkip = "not_spot_median" | "no_window" | "windows_too_short";

/** Names a note lists of its targets before it says "and N more". */
const NOTE_MAX_TARGETS = 5;

/**
 * One line per reason the off-chain targets of `monitors` are not warmed from candles under `rules` (warmupSkip), with
 * their count and first ids and config keys: what check-config prints and the daemon logs at start and reload (none when warm-up is off).
 */
export function warmupNotes(monitors: MonitorsConfig, rules: readonly RuleConfig[]): string[] {
  if (!monitors.warmup.enabled) return [];
  const { interval } = monitors.warmup;
  const evaluator = createEvaluator(rules);
  const idsByReason = new Map<string, string[]>();
  for (const { spec } of planTargets(monitors)) {
    if (spec.kind !== "offchain") continue;
    const targetRules = evaluator.rulesFor(spec);
    const skip = warmupSkip(spec, targetRules, interval);
    if (skip === null) continue;
    const reason = describeSkip(skip, targetRules, interval);
    const ids = idsByReason.get(reason) ?? [];
    ids.push(`${spec.id} (${configKey(monitors, spec)})`);
    idsByReason.set(reason, ids);
  }
  return [...idsByReason].map(
    ([reason, ids]) =>
      `${ids.length} off-chain target(s) not warmed from ${interval} candles (${reason}); their history fills from their own data: ${listNames(ids, NOTE_MAX_TARGETS)}`,
  );
}

// The config entry a target comes from (the first, when identical entries share it): `monitors.offchain[1]`.
function configKey(monitors: MonitorsConfig, spec: Extract<TargetSpec, { kind: "offchain" }>): string {
  const index = monitors.offchain.findIndex(
    (m) =>
      m.pair === spec.pair &&
      m.entryType === spec.entryType &&
      m.aggregation === spec.aggregation &&
      m.interval === spec.interval &&
      (m.entryType === "future" ? m.expiry : null) === spec.expiry,
  );
  return `monitors.offchain[${index}]`;
}

// Why, in words (the windows and close spacing named: targets with others are another group).
function describeSkip(
  skip: WarmupSkip,
  rules: Pick<TargetRules, "windowsMs" | "retainMs">,
  interval: Interval,
): string {
  switch (skip) {
    case "not_spot_median":
      return "upstream candles are spot medians, these targets are not";
    case "no_window":
      return "no enabled rule reads a window of their price history";
    case "windows_too_short": {
      const windows = [...new Set(rules.windowsMs)].sort((a, b) => a - b).map(formatWindowMs);
      const bucketMs = INTERVAL_MS[interval];
      const spacingMs = keptCloseSpacingMs(rules.retainMs, bucketMs);
      const spacing =
        spacingMs === bucketMs
          ? `the ${formatWindowMs(spacingMs)} between two closes`
          : `the ${formatWindowMs(spacingMs)} between two closes their history keeps (a ${formatWindowMs(rules.retainMs)} retention thins the ${interval} closes)`;
      return `no window of their rules (${windows.join(", ")}) is longer than ${spacing}: a window's own polls serve it a window after they start, so closes would add verdicts for at most one close spacing`;
    }
  }
}

/** Fetch the candlesticks of a spot median target (see canWarmUp) and turn them into history points. */
export async function warmUpHistory(
  client: PragmaClient,
  spec: Extract<TargetSpec, { kind: "offchain" }>,
  interval: Interval,
  lookbackMs: number,
  nowMs: number,
): Promise<WarmupPoint[]> {
  const series = await client.getCandlesticks(
    {
      pair: spec.pair,
      entryType: "spot",
      aggregation: "median",
      interval,
      routing: true,
      withComponents: false,
    },
    { sinceMs: warmupSinceMs(interval, lookbackMs, nowMs) },
  );
  return candlesToHistory(series, interval, lookbackMs, nowMs);
}

/**
 * History fetches allowed in flight at once. A start, a reload or a cluster handover warms every new target at once;
 * unbounded, those candle requests fill the upstream pool and the targets' first polls queue behind them (measured:
 * 130 targets adopted by a cluster member were first polled 20 s after they were owned, instead of within a period).
 */
export const WARMUP_CONCURRENCY = 4;

/** Runs tasks with at most `limit` of them in flight; the rest wait their turn in arrival order. */
export interface TaskGate {
  run<T>(task: () => Promise<T>): Promise<T>;
}

/** A gate admitting `limit` tasks at a time. */
export function taskGate(limit: number): TaskGate {
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const release = (): void => {
    inFlight -= 1;
    waiting.shift()?.();
  };
  return {
    async run(task) {
      if (inFlight >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
      inFlight += 1;
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}
