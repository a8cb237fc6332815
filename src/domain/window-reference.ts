// The reference point of a windowed rule: the history point at or just before now − window, close enough to judge.
import { formatWindowMs } from "./format.js";
import { minSpacingMsFor, type PriceHistory } from "./price-history.js";

/**
 * The least tolerance, whatever the window: prices are polled about every second with jitter and the
 * upstream's timestamps advance in steps of about a second, so a reference up to 2 s before
 * now − window is ordinary sampling, not a gap.
 */
export const MIN_WINDOW_TOLERANCE_MS = 2_000;

/**
 * How far before now − window a reference point may lie and still give a verdict: 10 % of the window
 * (the move is then measured over at most 1.1 × the window, and the summary names that span), at least
 * MIN_WINDOW_TOLERANCE_MS, and never finer than the history's own spacing between kept points (a long
 * window on the same target thins the history; a tolerance below its resolution would drop verdicts at
 * random). Anything older, such as a warm-up candle 29 s old for a 10 s window, is no verdict yet.
 */
export function windowToleranceMs(windowMs: number, history: Pick<PriceHistory, "minSpacingMs">): number {
  return Math.max(windowMs / 10, MIN_WINDOW_TOLERANCE_MS, history.minSpacingMs);
}

/**
 * The time between two `bucketMs` candle closes a history retaining `retainMs` keeps: a bucket, or the least multiple
 * of one its point spacing lets in (a 1 d window on the target thins 1min closes to 2 min apart).
 */
export function keptCloseSpacingMs(retainMs: number, bucketMs: number): number {
  return bucketMs * Math.max(1, Math.ceil(minSpacingMsFor(retainMs) / bucketMs));
}

/**
 * Whether candle closes of `bucketMs` would add verdicts worth their fetch to one of `windowsMs`, on a history
 * retaining `retainMs`: some window is longer than the kept close spacing. A window reads the newest point at or
 * before its start, at most its tolerance older (windowReferenceIndex), so closes give it a verdict in its tolerance's
 * share of each spacing (all of it when the tolerance spans the spacing), and a pending alert survives the gaps; its
 * own polls serve it a window after they start. A window no longer than the spacing could get verdicts from closes
 * for at most that window, one spacing (the shipped 10 s and 1 min windows on 1min candles); a longer one gets them
 * over several closes (1min candles: a 5 min window about half the time of its first 5 min).
 */
export function candlesWarmAWindow(
  windowsMs: readonly number[],
  retainMs: number,
  bucketMs: number,
): boolean {
  const spacingMs = keptCloseSpacingMs(retainMs, bucketMs);
  return windowsMs.some((windowMs) => windowMs > spacingMs);
}

/**
 * The oldest time a point can still be the reference of any window the history serves, at `nowMs` or later:
 * now − the longest window − that window's tolerance (a shorter window has a later reference and no wider one).
 */
export function oldestReferenceMs(history: PriceHistory, nowMs: number): number {
  return nowMs - history.retainMs - windowToleranceMs(history.retainMs, history);
}

/** No point at or before now − window: the history does not reach back that far yet. */
export const NO_REFERENCE = -1;
/** The newest point at or before now − window is older than the tolerance allows (a gap in the history). */
export const REFERENCE_TOO_OLD = -2;

/** Index of the reference point of a `windowMs` window ending at `nowMs`, or NO_REFERENCE / REFERENCE_TOO_OLD. */
export function windowReferenceIndex(history: PriceHistory, nowMs: number, windowMs: number): number {
  const referenceAtMs = nowMs - windowMs;
  const index = history.indexAtOrBefore(referenceAtMs);
  if (index < 0) return NO_REFERENCE;
  if (referenceAtMs - history.timeAt(index) > windowToleranceMs(windowMs, history)) return REFERENCE_TOO_OLD;
  return index;
}

/**
 * The span a summary names: the configured window ("10s"), or the span the move was really measured
 * over when it differs by a whole second or more ("29s", with `window` set to "window 10s, " for the
 * parenthesis), so a summary never claims a span it did not measure.
 */
export function describeSpan(
  windowMs: number,
  spanMs: number,
): { readonly span: string; readonly window: string } {
  const spanS = Math.round(spanMs / 1_000);
  if (!Number.isFinite(spanS) || spanS === Math.round(windowMs / 1_000))
    return { span: formatWindowMs(windowMs), window: "" };
  return { span: `${spanS}s`, window: `window ${formatWindowMs(windowMs)}, ` };
}
