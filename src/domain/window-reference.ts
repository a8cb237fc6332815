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
 * Whether the closes of `bucketMs` candles stand in for the start of one of `windowsMs`, on a history retaining
 * `retainMs`, wherever they cover it. A window reads the newest point at or before its start (windowReferenceIndex:
 * one-sided, not the nearest), so between two closes the history keeps (a bucket apart, or the least multiple of a
 * bucket its point spacing lets in) that point is up to their spacing old: only a window whose tolerance reaches the
 * spacing is served throughout (1min closes: windows of 10 min and more). A shorter one would get a verdict only in
 * its tolerance's share of each spacing (a 60 s window: 6 s of each minute) until its own polls cover it.
 */
export function candlesServeAWindow(
  windowsMs: readonly number[],
  retainMs: number,
  bucketMs: number,
): boolean {
  const history = { minSpacingMs: minSpacingMsFor(retainMs) };
  const keptSpacingMs = bucketMs * Math.max(1, Math.ceil(history.minSpacingMs / bucketMs));
  return windowsMs.some((windowMs) => windowToleranceMs(windowMs, history) >= keptSpacingMs);
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
