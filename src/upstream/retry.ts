// Retry policy of upstream GETs: which failures are transient, exponential backoff with full jitter, Retry-After, bounded attempts and time.
import { delayMs, upstreamRetryBackoff } from "../backoff.js";
import type { PmError, UpstreamErrorBody } from "../domain/errors.js";

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
  const waitMs = delayMs(upstreamRetryBackoff(policy), attempt, random, retryAfterMs);
  // The server named the earliest useful moment: waiting less is pointless, so give up if it is out of budget.
  if (retryAfterMs !== undefined) return waitMs <= remainingMs ? waitMs : null;
  return Math.min(waitMs, remainingMs);
}

/** Words of a server message that name a passing storage or capacity trouble, not the request. */
const TRANSIENT_MESSAGE =
  /timed? ?out|timeout|connection|pool|unavailable|temporar|too many|deadlock|reset|refused|closed|shutting down|overload|busy/i;

/**
 * Whether a non-2xx answer can succeed when the same request is sent again: 429 and 5xx can, except
 * a failure the Pragma server itself pinned on the request. pragma-api-facts.md ("Errors", "Defaults
 * and rules"): a 500 caused by the request (bad symbol, missing aggregate view, twap on /onchain)
 * fails the same way every time, and carries the server's own JSON error body (or the spec's
 * InvalidSignature body); a storage failure has the same body, but its message names the trouble
 * (a timeout, the connection pool). A 500 with any other body (a proxy's page, a crash) and 502, 503,
 * 504 are transient; 501 (not implemented) never changes. A permanent failure is still a failed poll
 * (it raises upstream_error and is polled again next period), it is only not retried within the poll.
 */
export function isTransientHttpFailure(status: number, body: UpstreamErrorBody): boolean {
  if (status === 429) return true;
  if (status < 500 || status === 501) return false;
  if (status !== 500) return true;
  switch (body.kind) {
    case "entry":
      return TRANSIENT_MESSAGE.test(body.message);
    case "signature":
      return false;
    case "vault":
    case "text":
    case "empty":
      return true;
  }
}
