// One observation per price timestamp for a target fed by both the stream and polls.
import type { PairPrice } from "../domain/types.js";

/** What was last fed to the monitor for a target: its price timestamp and whether it carried components. */
export interface FedPrice {
  readonly timestampMs: number;
  readonly withComponents: boolean;
}

/**
 * Whether `next` repeats what the monitor already has: older than the last price fed, or of the same
 * timestamp without adding components (a component poll landing on a streamed price still updates them).
 */
export function isRepeatedPrice(last: FedPrice | null, next: PairPrice): boolean {
  if (last === null || next.timestampMs > last.timestampMs) return false;
  if (next.timestampMs < last.timestampMs) return true;
  return last.withComponents || next.components.length === 0;
}

/** The record of `price` once fed. */
export function fedPrice(price: PairPrice): FedPrice {
  return { timestampMs: price.timestampMs, withComponents: price.components.length > 0 };
}
