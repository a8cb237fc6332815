// One poll stream per target: phase-locked, non-overlapping, timed out, backing off on failure; failures are values.
import {
  Observable,
  asyncScheduler,
  from,
  type ObservableInput,
  type Subscriber,
  type Unsubscribable,
} from "rxjs";
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
  /**
   * The first poll starts at once and only the later ones take the random phase, planned as if the first had
   * started up to min(spreadMs, periodMs) earlier (the second comes at the first phase instant after the first
   * ended, so within a period of that end, never at once; a failed first poll retries after its backoff plus the
   * offset): a target taken over from another cluster member, whose data is already a lease old, is not left
   * waiting for its phase.
   */
  readonly firstAtOnce?: boolean | undefined;
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
 * min(spreadMs, period) (or at once, `firstAtOnce`, the offset then placing the later polls), and after a success the next one is planned one (jittered) period after the
 * previous one was *planned*, not after it actually started, so timer lateness never accumulates and
 * with no jitter a target is polled exactly once per period at its own phase (many targets stay spread
 * over the period, and a change upstream is seen at most one period later). A poll that took longer than
 * the period is followed at once (the phase moves to then), but for a `firstAtOnce` first poll, which waits for
 * its next phase instant; after a failure the next poll waits a
 * backed-off delay after it finished, and the phase restarts from there. Polls never overlap: the next
 * one is only scheduled once the previous one is over. Unsubscribing aborts an in-flight request through
 * its AbortSignal.
 *
 * Hand-written on the scheduler rather than composed from defer/timeout/catchError/finalize/repeat/timer:
 * with hundreds of targets each polled every second, the operator chain rebuilt per poll (a dozen
 * subscribers, subscriptions and closures) was a measurable share of the daemon's CPU. Per poll this costs
 * one timeout action, one delay action, one small Attempt record and, only for an ObservableInput that is not
 * a promise, one inner subscription; the state lives in one PollLoop per subscription. The AbortController is shared by the polls of one subscription and replaced only after it
 * was aborted (a timed-out or torn-down request), so every poll still gets a signal that has not fired.
 */
export function poll$<T>(
  fetch: (signal: AbortSignal) => ObservableInput<T>,
  options: PollOptions,
): Observable<PollOutcome<T>> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return new Observable<PollOutcome<T>>((subscriber) => {
    const loop = new PollLoop(fetch, options, scheduler, subscriber);
    loop.begin();
    return () => loop.stop();
  });
}

/** The timeout of a poll before it is armed. */
const NO_TIMEOUT: Unsubscribable = { unsubscribe: () => undefined };

/** One poll in flight: its timeout action, its subscription (an Observable input only), and when it started. */
interface Attempt {
  settled: boolean;
  timeout: Unsubscribable;
  inner: Unsubscribable | null;
  readonly startedAtMs: number;
}

/** The state of one subscription to poll$: its failure count, its phase, its next poll and the one in flight. */
class PollLoop<T> {
  private consecutiveFailures = 0;
  private retryAfterMs: number | undefined = undefined;
  private controller: AbortController | null = null;
  /** The poll in flight (null between polls). */
  private current: Attempt | null = null;
  /** The scheduled start of the next poll. */
  private next: Unsubscribable | null = null;
  /** When the current (or next) poll was planned to start: the phase that successes keep. */
  private plannedStartMs: number;
  /** While the first poll of a `firstAtOnce` loop is in flight: its random phase offset (ms); null otherwise. */
  private firstAtOnceOffsetMs: number | null = null;
  private readonly startPoll = (): void => this.start();
  /** The deadline of the poll in flight: one function for all polls (a poll's timeout is cancelled when it ends). */
  private readonly timeOutCurrent = (): void => {
    if (this.current !== null) this.timeOut(this.current);
  };

  constructor(
    private readonly fetch: (signal: AbortSignal) => ObservableInput<T>,
    private readonly options: PollOptions,
    private readonly scheduler: PollClock,
    private readonly subscriber: Subscriber<PollOutcome<T>>,
  ) {
    this.plannedStartMs = scheduler.now();
  }

  /** The first poll, at a random offset within min(spreadMs, periodMs), or at once with that offset for the later ones. */
  begin(): void {
    const { spreadMs, periodMs, random, firstAtOnce } = this.options;
    const offsetMs = Math.round(Math.min(spreadMs, periodMs) * random());
    if (firstAtOnce === true) {
      this.plannedStartMs -= offsetMs;
      this.firstAtOnceOffsetMs = offsetMs;
      this.start();
    } else if (offsetMs > 0) this.scheduleNext(offsetMs);
    else this.start();
  }

  /** Unsubscribed: no next poll, and the one in flight is dropped (its request aborted). */
  stop(): void {
    this.next?.unsubscribe();
    const poll = this.current;
    this.current = null;
    if (poll === null) return;
    poll.timeout.unsubscribe();
    poll.inner?.unsubscribe();
    // abort only a request still in flight: abort() builds a DOMException with a stack trace
    if (!poll.settled) this.abortRequest();
  }

  /** Abort the request in flight; the next poll gets a new controller (this loop is the only one that aborts it). */
  private abortRequest(): void {
    this.controller?.abort();
    this.controller = null;
  }

  private scheduleNext(delayMs: number): void {
    if (this.subscriber.closed) return;
    this.plannedStartMs = this.scheduler.now() + delayMs;
    this.next = this.scheduler.schedule(this.startPoll, delayMs);
  }

  /** Start a poll: arm its timeout, call fetch, and follow what it returns. */
  private start(): void {
    this.next = null;
    if (this.subscriber.closed) return;
    // not `signal.aborted`: that getter validates its receiver on every read, a measurable share of a poll
    this.controller ??= new AbortController();
    const poll: Attempt = {
      settled: false,
      timeout: NO_TIMEOUT,
      inner: null,
      startedAtMs: this.scheduler.now(),
    };
    this.current = poll;
    poll.timeout = this.scheduler.schedule(this.timeOutCurrent, this.options.timeoutMs);
    let input: ObservableInput<T>;
    try {
      input = this.fetch(this.controller.signal);
    } catch (error) {
      this.finish(poll, { ok: false, error: toPmError(error) });
      return;
    }
    if (isPromiseLike(input)) {
      input.then(
        (value) => {
          if (this.current === poll && !poll.settled) this.finish(poll, { ok: true, value });
        },
        (error: unknown) => {
          if (this.current === poll && !poll.settled)
            this.finish(poll, { ok: false, error: toPmError(error) });
        },
      );
      return;
    }
    this.follow(poll, input);
  }

  /** Any other ObservableInput: every value is an outcome; an error is one (final) failure outcome. */
  private follow(poll: Attempt, input: ObservableInput<T>): void {
    const inner = from(input).subscribe({
      next: (value) => {
        if (this.current === poll) this.settle(poll, { ok: true, value });
      },
      error: (error: unknown) => {
        if (this.current === poll) this.finish(poll, { ok: false, error: toPmError(error) });
      },
      complete: () => {
        if (this.current === poll) this.end(poll);
      },
    });
    if (this.current === poll && !inner.closed) poll.inner = inner;
  }

  /** The poll's deadline passed first: drop its request and report a timeout. */
  private timeOut(poll: Attempt): void {
    if (poll.settled || this.current !== poll) return;
    poll.inner?.unsubscribe();
    this.abortRequest();
    const error = new PmError(
      "PM_ERR_UPSTREAM_TIMEOUT",
      `poll timed out after ${this.options.timeoutMs} ms`,
      {
        retryable: true,
      },
    );
    this.finish(poll, { ok: false, error });
  }

  /** The poll's outcome, and the poll is over. */
  private finish(poll: Attempt, result: Result<T>): void {
    this.settle(poll, result);
    this.end(poll);
  }

  /** An outcome of the poll: the timeout no longer applies; count it and emit it. */
  private settle(poll: Attempt, result: Result<T>): void {
    poll.settled = true;
    poll.timeout.unsubscribe();
    this.consecutiveFailures = result.ok ? 0 : this.consecutiveFailures + 1;
    this.retryAfterMs = result.ok ? undefined : result.error.details.retryAfterMs;
    const durationMs = this.scheduler.now() - poll.startedAtMs;
    const { consecutiveFailures } = this;
    this.subscriber.next(
      result.ok
        ? { ok: true, value: result.value, durationMs, consecutiveFailures }
        : { ok: false, error: result.error, durationMs, consecutiveFailures },
    );
  }

  /** The poll is over: stop its timeout, and schedule the next one (unless torn down meanwhile). */
  private end(poll: Attempt): void {
    poll.timeout.unsubscribe();
    if (this.current === poll) this.current = null;
    const delayMs = nextPollDelayMs(this.options, this.consecutiveFailures, this.retryAfterMs);
    const nowMs = this.scheduler.now();
    const firstOffsetMs = this.firstAtOnceOffsetMs;
    this.firstAtOnceOffsetMs = null;
    // a failure waits its whole backoff after the end (a first-at-once poll's retry also its phase offset, so
    // targets taken over together and failing together do not retry, and then poll, in lockstep)
    if (this.consecutiveFailures > 0) return this.scheduleNext(delayMs + (firstOffsetMs ?? 0));
    // a success keeps the phase: the next start is planned from this one's plan, never earlier than the end
    // of this poll
    let nextStartMs = this.plannedStartMs + delayMs;
    // a first-at-once poll started before its phase: one that ended past the phase waits for the next one
    // instead of polling again at once (a back-to-back poll, and the phase lost to the burst's end)
    if (firstOffsetMs !== null && nextStartMs < nowMs)
      nextStartMs += Math.ceil((nowMs - nextStartMs) / this.options.periodMs) * this.options.periodMs;
    this.scheduleNext(Math.max(0, nextStartMs - nowMs));
  }
}

/** Whether an ObservableInput is a promise (the pipeline's fetches are), handled without `from()`. */
function isPromiseLike<T>(input: ObservableInput<T>): input is PromiseLike<T> {
  return typeof (input as { then?: unknown }).then === "function" && !(input instanceof Observable);
}
