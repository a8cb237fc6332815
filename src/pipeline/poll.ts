// One poll stream per target: phase-locked, non-overlapping, timed out, backing off on failure; failures are values.
import { Observable, Subscription, asyncScheduler, from, type ObservableInput } from "rxjs";
import { delayMs, pollBackoff } from "../backoff.js";
import { PmError, isPmError, type Result } from "../domain/errors.js";
import type { PollClock } from "./coalescing-clock.js";

/** Timing policy of a poll stream. */
export interface PollOptions {
  readonly periodMs: number;
  /** Fraction of the period used as random jitter of each poll's start (0.1 = ±5 %); 0 keeps polls exactly one period apart. */
  readonly jitter: number;
  /** The first poll starts at a random offset in [0, min(spreadMs, periodMs)); later polls keep that phase. */
  readonly spreadMs: number;
  /** Upper bound of the delay between polls while failing. */
  readonly maxBackoffMs: number;
  /** Whole-poll deadline (covers the client's own retries). */
  readonly timeoutMs: number;
  /** Uniform random in [0, 1); injected so tests are deterministic. */
  readonly random: () => number;
  /** Time and timers: asyncScheduler by default, a TestScheduler in tests, a coalescing clock in the daemon. */
  readonly scheduler?: PollClock;
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
  return delayMs(pollBackoff(periodMs, maxBackoffMs), consecutiveFailures, random, retryAfterMs);
}

/** Turn anything thrown by a fetch into a PmError (unknown errors become network errors). */
export function toPmError(error: unknown): PmError {
  if (isPmError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new PmError("PM_ERR_UPSTREAM_NETWORK", message, { retryable: true, cause: error });
}

/**
 * Poll `fetch` forever, phase-locked: the first poll starts at a random offset within
 * min(spreadMs, period), and after a success the next one is planned one (jittered) period after the
 * previous one was *planned*, not after it actually started, so timer lateness never accumulates and
 * with no jitter a target is polled exactly once per period at its own phase (many targets stay spread
 * over the period, and a change upstream is seen at most one period later). A poll that took longer than
 * the period is followed at once (the phase moves to then); after a failure the next poll waits a
 * backed-off delay after it finished, and the phase restarts from there. Polls never overlap: the next
 * one is only scheduled once the previous one is over. Unsubscribing aborts an in-flight request through
 * its AbortSignal.
 *
 * Hand-written on the scheduler rather than composed from defer/timeout/catchError/finalize/repeat/timer:
 * with hundreds of targets each polled every second, the operator chain rebuilt per poll (a dozen
 * subscribers, subscriptions and closures) was a measurable share of the daemon's CPU. Per poll this costs
 * one timeout action, one delay action and, only for an ObservableInput that is not a promise, one inner
 * subscription. The AbortController is shared by the polls of one subscription and replaced only after it
 * was aborted (a timed-out or torn-down request), so every poll still gets a signal that has not fired.
 */
export function poll$<T>(
  fetch: (signal: AbortSignal) => ObservableInput<T>,
  options: PollOptions,
): Observable<PollOutcome<T>> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return new Observable<PollOutcome<T>>((subscriber) => {
    let consecutiveFailures = 0;
    let retryAfterMs: number | undefined;
    let controller: AbortController | null = null;
    /** The poll in flight (null between polls); its timeout action and, for an Observable input, its subscription. */
    let current: { settled: boolean; timeout: Subscription; inner: Subscription | null } | null = null;
    /** The scheduled start of the next poll. */
    let next: Subscription | null = null;
    /** When the current (or next) poll was planned to start: the phase that successes keep. */
    let plannedStartMs = scheduler.now();

    const emit = (result: Result<T>, startedAtMs: number): void => {
      consecutiveFailures = result.ok ? 0 : consecutiveFailures + 1;
      retryAfterMs = result.ok ? undefined : result.error.details.retryAfterMs;
      const durationMs = scheduler.now() - startedAtMs;
      subscriber.next(
        result.ok
          ? { ok: true, value: result.value, durationMs, consecutiveFailures }
          : { ok: false, error: result.error, durationMs, consecutiveFailures },
      );
    };
    const scheduleNext = (delayMs: number): void => {
      if (subscriber.closed) return;
      plannedStartMs = scheduler.now() + delayMs;
      next = scheduler.schedule(startPoll, delayMs);
    };
    const startPoll = (): void => {
      next = null;
      if (subscriber.closed) return;
      if (controller === null || controller.signal.aborted) controller = new AbortController();
      const startedAtMs = scheduler.now();
      const poll: { settled: boolean; timeout: Subscription; inner: Subscription | null } = {
        settled: false,
        timeout: Subscription.EMPTY,
        inner: null,
      };
      current = poll;
      /** The poll is over: stop its timeout, and schedule the next one (unless torn down meanwhile). */
      const end = (): void => {
        poll.timeout.unsubscribe();
        if (current === poll) current = null;
        const delayMs = nextPollDelayMs(options, consecutiveFailures, retryAfterMs);
        // a success keeps the phase: the next start is planned from this one's plan, never earlier than
        // the end of this poll; a failure waits its whole backoff after the end
        scheduleNext(
          consecutiveFailures === 0 ? Math.max(0, plannedStartMs + delayMs - scheduler.now()) : delayMs,
        );
      };
      /** First outcome of the poll: a value or a failure; the timeout no longer applies. */
      const settle = (result: Result<T>): void => {
        poll.settled = true;
        poll.timeout.unsubscribe();
        emit(result, startedAtMs);
      };
      poll.timeout = scheduler.schedule(() => {
        if (poll.settled || current !== poll) return;
        poll.inner?.unsubscribe();
        controller?.abort();
        settle({
          ok: false,
          error: new PmError("PM_ERR_UPSTREAM_TIMEOUT", `poll timed out after ${options.timeoutMs} ms`, {
            retryable: true,
          }),
        });
        end();
      }, options.timeoutMs);

      let input: ObservableInput<T>;
      try {
        input = fetch(controller.signal);
      } catch (error) {
        settle({ ok: false, error: toPmError(error) });
        end();
        return;
      }
      if (isPromiseLike(input)) {
        input.then(
          (value) => {
            if (current !== poll || poll.settled) return;
            settle({ ok: true, value });
            end();
          },
          (error: unknown) => {
            if (current !== poll || poll.settled) return;
            settle({ ok: false, error: toPmError(error) });
            end();
          },
        );
        return;
      }
      // Any other ObservableInput: every value is an outcome; an error is one (final) failure outcome.
      const inner = from(input).subscribe({
        next: (value) => {
          if (current !== poll) return;
          poll.settled = true;
          poll.timeout.unsubscribe();
          emit({ ok: true, value }, startedAtMs);
        },
        error: (error: unknown) => {
          if (current !== poll) return;
          poll.settled = true;
          emit({ ok: false, error: toPmError(error) }, startedAtMs);
          end();
        },
        complete: () => {
          if (current === poll) end();
        },
      });
      if (current === poll && !inner.closed) poll.inner = inner;
    };

    const firstDelayMs = Math.round(Math.min(options.spreadMs, options.periodMs) * options.random());
    if (firstDelayMs > 0) scheduleNext(firstDelayMs);
    else startPoll();

    return () => {
      next?.unsubscribe();
      const poll = current;
      current = null;
      if (poll !== null) {
        poll.timeout.unsubscribe();
        poll.inner?.unsubscribe();
        // abort only a request still in flight: abort() builds a DOMException with a stack trace
        if (!poll.settled) controller?.abort();
      }
    };
  });
}

/** Whether an ObservableInput is a promise (the pipeline's fetches are), handled without `from()`. */
function isPromiseLike<T>(input: ObservableInput<T>): input is PromiseLike<T> {
  return typeof (input as { then?: unknown }).then === "function" && !(input instanceof Observable);
}
