// Every retry wait of the daemon from one formula: exponential backoff with jitter, policies as data, Retry-After composed in.

/**
 * How a wait grows and how a server's Retry-After combines with it. The ceiling of attempt n is
 * min(maxDelayMs, baseDelayMs · 2^(n-1)); `full` jitter waits uniformly in [0, ceiling), `equal` jitter waits
 * half the ceiling plus a uniform share of the other half. The wait is never shorter than `minDelayMs` unless
 * that is longer than `maxDelayMs`, which always wins.
 */
export interface BackoffPolicy {
  readonly jitter: "full" | "equal";
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly minDelayMs: number;
  /**
   * `replace`: the server named when to come back, so its Retry-After is the wait, even past maxDelayMs
   * (the caller bounds it); `lengthen`: it only makes the wait longer, never past maxDelayMs.
   */
  readonly retryAfter: "replace" | "lengthen";
}

/** Retries of one upstream GET (AWS's "full jitter"): the server's Retry-After is the wait. */
export function upstreamRetryBackoff(limits: {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}): BackoffPolicy {
  const { baseDelayMs, maxDelayMs } = limits;
  return { jitter: "full", baseDelayMs, maxDelayMs, minDelayMs: 0, retryAfter: "replace" };
}

/** Redeliveries of a chat-ops sink: equal jitter, so a retry never comes too soon; Retry-After is the wait. */
export function sinkRetryBackoff(limits: {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}): BackoffPolicy {
  const { baseDelayMs, maxDelayMs } = limits;
  return { jitter: "equal", baseDelayMs, maxDelayMs, minDelayMs: 0, retryAfter: "replace" };
}

/**
 * Polls of a failing target: equal jitter from one period up to `maxBackoffMs`, never sooner than the next
 * period; a Retry-After longer than the backoff is honoured up to `maxBackoffMs` (the target stays polled).
 */
export function pollBackoff(periodMs: number, maxBackoffMs: number): BackoffPolicy {
  return {
    jitter: "equal",
    baseDelayMs: periodMs,
    maxDelayMs: maxBackoffMs,
    minDelayMs: periodMs,
    retryAfter: "lengthen",
  };
}

/** Reconnections of `pragma-monitor tail` to the WebSocket API: full jitter from a quarter second to 30 s. */
export const TAIL_RECONNECT_BACKOFF: BackoffPolicy = {
  jitter: "full",
  baseDelayMs: 250,
  maxDelayMs: 30_000,
  minDelayMs: 0,
  retryAfter: "replace",
};

/**
 * The wait in whole ms before retrying after `attempt` (1-based) consecutive failures, with `random` uniform in
 * [0, 1) and the server's `retryAfterMs` when it sent one.
 */
export function delayMs(
  policy: BackoffPolicy,
  attempt: number,
  random: () => number,
  retryAfterMs?: number,
): number {
  if (retryAfterMs !== undefined && policy.retryAfter === "replace") return retryAfterMs;
  const exponent = Math.min(Math.max(0, attempt - 1), 30); // 2^30 already dwarfs any sane maxDelayMs
  const ceilingMs = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** exponent);
  const jitteredMs =
    policy.jitter === "full"
      ? Math.floor(random() * ceilingMs)
      : Math.round(ceilingMs / 2 + (ceilingMs / 2) * random());
  const backoffMs = Math.min(policy.maxDelayMs, Math.max(policy.minDelayMs, jitteredMs));
  if (retryAfterMs === undefined) return backoffMs;
  return Math.min(policy.maxDelayMs, Math.max(backoffMs, retryAfterMs));
}
