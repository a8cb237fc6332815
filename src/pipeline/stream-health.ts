// Whether a streamed target takes its prices from the stream or from polls: a pure reducer over (state, input, time).

/** The stream is trusted (polls off), or the target polls until the stream proves itself again. */
export type StreamHealth =
  | { readonly mode: "stream"; readonly lastPriceAtMs: number }
  | { readonly mode: "poll"; readonly lastPriceAtMs: number; readonly freshInRow: number };

/**
 * A streamed price of the target arrived, its connection showed it is alive without a price of it yet (connected,
 * bytes of the first event, the historical event), time passed (a periodic check), or its connection went down.
 */
export type StreamHealthInput =
  | { readonly kind: "price"; readonly atMs: number }
  | { readonly kind: "alive"; readonly atMs: number }
  | { readonly kind: "check"; readonly atMs: number }
  | { readonly kind: "down"; readonly atMs: number };

/** When the stream counts as stale, and how many fresh prices in a row make it trusted again. */
export interface StreamHealthPolicy {
  readonly staleAfterMs: number;
  readonly recoverEvents: number;
}

/**
 * A target that just started streaming: trusted, with its stale window counted from now (`lastPriceAtMs` is where
 * the window counts from: the last price, or the last sign of life of a connection that has not sent one yet).
 */
export function initialStreamHealth(nowMs: number): StreamHealth {
  return { mode: "stream", lastPriceAtMs: nowMs };
}

/**
 * The next state: a trusted stream goes stale (→ poll) when no price came for longer than `staleAfterMs` or
 * its connection went down (a live connection still delivering its first event restarts the window: a slow start
 * is not a stall); a polling target goes back to the stream after `recoverEvents` prices in a row,
 * each within `staleAfterMs` of the previous one (a gap, a down connection, or a stale check restarts the count).
 */
export function stepStreamHealth(
  state: StreamHealth,
  input: StreamHealthInput,
  policy: StreamHealthPolicy,
): StreamHealth {
  const stale = input.atMs - state.lastPriceAtMs > policy.staleAfterMs;
  switch (input.kind) {
    case "price": {
      if (state.mode === "stream") return { mode: "stream", lastPriceAtMs: input.atMs };
      const freshInRow = stale ? 1 : state.freshInRow + 1;
      return freshInRow >= policy.recoverEvents
        ? { mode: "stream", lastPriceAtMs: input.atMs }
        : { mode: "poll", lastPriceAtMs: input.atMs, freshInRow };
    }
    case "alive":
      return state.mode === "stream" ? { mode: "stream", lastPriceAtMs: input.atMs } : state;
    case "check":
      if (!stale) return state;
      return state.mode === "poll" && state.freshInRow === 0
        ? state
        : { mode: "poll", lastPriceAtMs: state.lastPriceAtMs, freshInRow: 0 };
    case "down":
      return state.mode === "poll" && state.freshInRow === 0
        ? state
        : { mode: "poll", lastPriceAtMs: state.lastPriceAtMs, freshInRow: 0 };
  }
}
