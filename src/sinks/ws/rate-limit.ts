// Per-client message rate limit: a token bucket, plus a leaky strike counter that detects sustained floods.
/** Verdict on one incoming message. */
export type RateVerdict = "ok" | "limited" | "flood";

/** How many rate-limited messages beyond the allowed rate, in seconds' worth of the rate, mark a flood. */
export const FLOOD_SECONDS = 5;

export interface RateLimiter {
  take(nowMs: number): RateVerdict;
}

/**
 * Allow `perSecond` messages per second with a burst of `perSecond`. Each refused message adds a strike;
 * strikes leak at `perSecond` per second, so a client sending at more than twice the rate accumulates them
 * and is a flood once they exceed FLOOD_SECONDS × perSecond.
 */
export function createRateLimiter(perSecond: number, startMs: number): RateLimiter {
  const capacity = Math.max(1, perSecond);
  const floodStrikes = FLOOD_SECONDS * capacity;
  let tokens = capacity;
  let strikes = 0;
  let lastMs = startMs;
  return {
    take(nowMs) {
      const elapsedS = Math.max(0, nowMs - lastMs) / 1000;
      lastMs = nowMs;
      tokens = Math.min(capacity, tokens + elapsedS * perSecond);
      strikes = Math.max(0, strikes - elapsedS * perSecond);
      if (tokens >= 1) {
        tokens -= 1;
        return "ok";
      }
      strikes += 1;
      return strikes > floodStrikes ? "flood" : "limited";
    },
  };
}
