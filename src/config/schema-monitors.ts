// Schema of the `monitors` section: the targets polled and how polls are paced.
import type { CandleInterval } from "../upstream/server-rules.js";
import { arrayKey, intKey, key, type SchemaSection } from "./schema-node.js";

/** `monitors.*` keys; the arrays are validated element by element (see monitors.ts). */
export const monitorsSchema = {
  offchain: arrayKey(
    "Off-chain pairs: [{pair, entryType, aggregation, interval, expiry, periodMs}].",
    "PM_MONITORS_OFFCHAIN",
  ),
  onchain: arrayKey("On-chain pairs: [{pair, network, aggregation, periodMs}].", "PM_MONITORS_ONCHAIN"),
  publishers: arrayKey(
    "On-chain publisher lists: [{network, publisherType, periodMs}].",
    "PM_MONITORS_PUBLISHERS",
  ),
  funding: arrayKey("Funding rates: [{pair, source, periodMs}].", "PM_MONITORS_FUNDING"),
  vaults: arrayKey("Vaults: [{id, periodMs}].", "PM_MONITORS_VAULTS"),
  jitter: key({
    doc: "Fraction of the period added as random jitter to each poll's start (0.1 = ±5 %). The default 0 keeps each target on its phase, polled exactly once per period, so a change upstream is seen at most one period later; jitter makes the phases drift.",
    format: "pm-number",
    default: 0,
    env: "PM_MONITORS_JITTER",
    min: 0,
    max: 1,
  }),
  spreadMs: intKey(
    "Poll phases: each target's first poll starts at a random offset within this many ms of start (at most its period), and later polls keep that phase, a period apart, so the polls of many targets stay spread over the period instead of hitting the upstream together. Also bounds how long readiness waits after a start or reload; 0 polls every target at once at start.",
    "PM_MONITORS_SPREAD_MS",
    10_000,
    0,
    3_600_000,
  ),
  coalesceMs: intKey(
    "Timer coalescing: poll starts, poll timeouts and backoffs are rounded to the nearest multiple of this many ms (at most a tenth of the target's period and a fifth of the poll timeout), so polls due close together share one wake-up of the daemon and cost about half the CPU. Moves a poll by at most half of it; 0 turns coalescing off.",
    "PM_MONITORS_COALESCE_MS",
    100,
    0,
    1_000,
  ),
  maxBackoffMs: intKey(
    "Longest backoff between polls of a failing target (ms).",
    "PM_MONITORS_MAX_BACKOFF_MS",
    60_000,
    100,
    3_600_000,
  ),
  warmup: {
    enabled: key({
      doc: "Warm price history from candlesticks when a target starts (at start, on reload, when a cluster member adopts it, unless the price points handed over with it already reach back as far and its newest point is at most a period, 5 % and a poll timeout old); at most 4 candle requests at a time, after the started targets' first data (waiting for each at most its period, 5 % more for timer coalescing, and a poll timeout), so first polls never wait behind them.",
      format: "pm-boolean",
      default: true,
      env: "PM_MONITORS_WARMUP_ENABLED",
    }),
    interval: key<CandleInterval>({
      doc: "Candle interval used for warm-up: one of the candle views the live server has (10s, 1min, 15min, 1h, 1d). Only spot median targets are warmed (candles are spot medians), and only those with a window longer than the time between the closes their history keeps: the interval, or a multiple of it when a long window of their rules (even one for other pairs) thins it (a 1 d one: 1min closes 2 min apart). A shorter window's own polls serve it a window after they start; a longer one gets verdicts from closes for its tolerance's share (10 % of it, at least 2 s) of each close spacing. So 1min candles warm only windows over 1 min, and none of the shipped 10 s and 1 min; check-config and the start log (a reload: its changes) name the others by reason",
      format: "pm-candle-interval",
      default: "1min",
      env: "PM_MONITORS_WARMUP_INTERVAL",
    }),
    lookbackMs: intKey(
      "How much history to warm (ms). Only the candles of this look-back are decoded: the server sends newest first, so the read stops at the first older candle (a body in another order is read in full); a malformed candle in it is left out and counted, an older one is not read.",
      "PM_MONITORS_WARMUP_LOOKBACK_MS",
      3_600_000,
      0,
      7 * 86_400_000,
    ),
  },
} as const satisfies SchemaSection;
