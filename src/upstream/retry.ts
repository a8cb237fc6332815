// Retry policy of upstream GETs: exponential backoff with full jitter, Retry-After, bounded attempts and time.
import type { PmError } from "../errors.js";

/** Retry settings; the same shape as RetryConfig in src/config/types.ts so the config passes straight in. */
export interface RetryPolicy {
  /** Total attempts including the first (1 = no retry). */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  /** Cap of the exponential backoff; a server's Retry-After may ask for longer and is honoured. */
  readonly maxDelayMs: number;
  /** No retry starts after this much time since the first attempt; no wait runs past it. */
  readonly maxElapsedMs: number;
}

/** Full-jitter exponential backoff: uniform in [0, min(maxDelayMs, baseDelayMs * 2^(attempt-1))). */
export function backoffDelayMs(policy: RetryPolicy, attempt: number, random: () => number): number {
  const exponent = Math.min(attempt - 1, 30); // 2^30 already dwarfs any sane maxDelayMs
  const ceilingMs = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** exponent);
  return Math.floor(random() * ceilingMs);
}

/**
 * How long to wait before the next attempt after `error`, or null to give up.
 * `attempt` is the 1-based number of the attempt that just failed; `elapsedMs` is time since the first.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  error: PmError,
  attempt: number,
  elapsedMs: number,
  random: () => number,
): number | null {
  if (!error.retryable || attempt >= policy.maxAttempts) return null;
  const remainingMs = policy.maxElapsedMs - elapsedMs;
  if (remainingMs <= 0) return null;
  const retryAfterMs = error.details.retryAfterMs;
  if (retryAfterMs !== undefined) {
    // The server named the earliest useful moment: waiting less is pointless, so give up if it is out of budget.
    return retryAfterMs <= remainingMs ? retryAfterMs : null;
  }
  return Math.min(backoffDelayMs(policy, attempt, random), remainingMs);
}
