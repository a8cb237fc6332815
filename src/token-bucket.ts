// Token bucket on an injected clock: `ratePerMinute` sustained, `burst` at once (chat-ops sinks, WebSocket clients).

/** A token bucket; `ratePerMinute <= 0` means unlimited. */
export interface TokenBucket {
  /** Whole tokens available at `nowMs`. */
  available(nowMs: number): number;
  /** Take one token if available. */
  tryTake(nowMs: number): boolean;
  /** Milliseconds until one token is available (0 when one is). */
  msUntilToken(nowMs: number): number;
}

/** Create a full bucket of `burst` tokens refilled at `ratePerMinute`. */
export function createTokenBucket(options: {
  readonly ratePerMinute: number;
  readonly burst: number;
  readonly nowMs: number;
}): TokenBucket {
  const capacity = Math.max(1, Math.floor(options.burst));
  const perMs = options.ratePerMinute / 60_000;
  const unlimited = !(perMs > 0);
  let tokens = capacity;
  let lastMs = options.nowMs;
  const refill = (nowMs: number): void => {
    if (nowMs > lastMs) tokens = Math.min(capacity, tokens + (nowMs - lastMs) * perMs);
    lastMs = Math.max(lastMs, nowMs);
  };
  return {
    available(nowMs) {
      if (unlimited) return Number.POSITIVE_INFINITY;
      refill(nowMs);
      return Math.floor(tokens);
    },
    tryTake(nowMs) {
      if (unlimited) return true;
      refill(nowMs);
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
    msUntilToken(nowMs) {
      if (unlimited) return 0;
      refill(nowMs);
      return tokens >= 1 ? 0 : Math.ceil((1 - tokens) / perMs);
    },
  };
}
