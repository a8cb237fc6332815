// One observation per price timestamp for a target fed by both the stream and polls.
import type { PairPrice } from "../domain/types.js";

/** What was last fed to the monitor for a target: its price timestamp, whether it carried components, and whether the stream delivered it. */
export interface FedPrice {
  readonly timestampMs: number;
  readonly withComponents: boolean;
  readonly viaStream: boolean;
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

/** The record of `price` once fed (by the stream or by a poll). */
export function fedPrice(price: PairPrice, viaStream: boolean): FedPrice {
  return { timestampMs: price.timestampMs, withComponents: price.components.length > 0, viaStream };
}

/**
 * Whether a target's next price must be checked against the last one fed: always while it streams (the stream
 * and its polls overlap), and on a polled target until a poll has fed once after a price from the stream (the
 * first poll after a switch back from the stream usually returns the price the stream just gave).
 */
export function checksRepeats(streamed: boolean, last: FedPrice | null): boolean {
  return streamed || last?.viaStream === true;
}
