// Per-client message rate limit: the shared token bucket, plus a leaky strike counter that detects sustained floods.
import { createTokenBucket } from "../../token-bucket.js";
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
  const bucket = createTokenBucket({ ratePerMinute: perSecond * 60, burst: perSecond, nowMs: startMs });
  const floodStrikes = FLOOD_SECONDS * Math.max(1, perSecond);
  let strikes = 0;
  let lastMs = startMs;
  return {
    take(nowMs) {
      strikes = Math.max(0, strikes - (Math.max(0, nowMs - lastMs) / 1000) * perSecond);
      lastMs = Math.max(lastMs, nowMs);
      if (bucket.tryTake(nowMs)) return "ok";
      strikes += 1;
      return strikes > floodStrikes ? "flood" : "limited";
    },
  };
}
