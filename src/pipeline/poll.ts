// One poll stream per target: non-overlapping, jittered, timed out, backing off on failure; failures are values.
import {
  asyncScheduler,
  catchError,
  defer,
  finalize,
  from,
  map,
  of,
  repeat,
  switchMap,
  throwError,
  timeout,
  timer,
  type Observable,
  type ObservableInput,
  type SchedulerLike,
} from "rxjs";
import { PmError, isPmError, type Result } from "../errors.js";

/** Timing policy of a poll stream. */
export interface PollOptions {
  readonly periodMs: number;
  /** Fraction of the period used as random jitter (0.1 = ±5 %); also spreads the first poll over one period. */
  readonly jitter: number;
  /** Upper bound of the delay between polls while failing. */
  readonly maxBackoffMs: number;
  /** Whole-poll deadline (covers the client's own retries). */
  readonly timeoutMs: number;
  /** Uniform random in [0, 1); injected so tests are deterministic. */
  readonly random: () => number;
  readonly scheduler?: SchedulerLike;
}

/** What a poll stream emits: the outcome plus how long it took and how many failures in a row precede it. */
export type PollOutcome<T> = Result<T> & {
  readonly durationMs: number;
  readonly consecutiveFailures: number;
};

/** Delay before the next poll: the jittered period on success, exponential backoff (with jitter, honouring Retry-After) on failure. */
export function nextPollDelayMs(
  options: PollOptions,
  consecutiveFailures: number,
  retryAfterMs?: number,
): number {
  const { periodMs, jitter, maxBackoffMs, random } = options;
  if (consecutiveFailures === 0) return Math.max(0, Math.round(periodMs * (1 + jitter * (random() - 0.5))));
  const exponent = Math.min(consecutiveFailures - 1, 16);
  const ceiling = Math.min(maxBackoffMs, periodMs * 2 ** exponent);
  const backoff = Math.max(periodMs, ceiling * (0.5 + 0.5 * random()));
  return Math.round(Math.min(maxBackoffMs, Math.max(backoff, retryAfterMs ?? 0)));
}

/** Turn anything thrown by a fetch into a PmError (unknown errors become network errors). */
export function toPmError(error: unknown): PmError {
  if (isPmError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new PmError("PM_ERR_UPSTREAM_NETWORK", message, { retryable: true, cause: error });
}

/**
 * Poll `fetch` forever: the first poll after a jittered offset within one period, each next one a
 * (jittered or backed-off) delay after the previous one finished, so polls never overlap. Unsubscribing
 * aborts an in-flight request through its AbortSignal.
 */
export function poll$<T>(
  fetch: (signal: AbortSignal) => ObservableInput<T>,
  options: PollOptions,
): Observable<PollOutcome<T>> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return defer(() => {
    let consecutiveFailures = 0;
    let retryAfterMs: number | undefined;
    const attempt$ = defer(() => {
      const controller = new AbortController();
      const startedAtMs = scheduler.now();
      // Abort only a request still in flight: abort() builds a DOMException with a stack trace, ~5 % of a
      // 500-target daemon's CPU when it ran after every completed poll.
      let settled = false;
      return from(fetch(controller.signal)).pipe(
        timeout({
          first: options.timeoutMs,
          scheduler,
          with: () =>
            throwError(
              () =>
                new PmError("PM_ERR_UPSTREAM_TIMEOUT", `poll timed out after ${options.timeoutMs} ms`, {
                  retryable: true,
                }),
            ),
        }),
        map((value): Result<T> => {
          settled = true;
          return { ok: true, value };
        }),
        catchError((error: unknown) => of<Result<T>>({ ok: false, error: toPmError(error) })),
        map((result): PollOutcome<T> => {
          consecutiveFailures = result.ok ? 0 : consecutiveFailures + 1;
          retryAfterMs = result.ok ? undefined : result.error.details.retryAfterMs;
          return { ...result, durationMs: scheduler.now() - startedAtMs, consecutiveFailures };
        }),
        finalize(() => {
          if (!settled) controller.abort();
        }),
      );
    });
    const firstDelayMs = Math.round(options.periodMs * options.jitter * options.random());
    const polls$ = attempt$.pipe(
      repeat({ delay: () => timer(nextPollDelayMs(options, consecutiveFailures, retryAfterMs), scheduler) }),
    );
    return firstDelayMs > 0 ? timer(firstDelayMs, scheduler).pipe(switchMap(() => polls$)) : polls$;
  });
}
