// One observation per price timestamp for a target fed by both the stream and polls.
import type { PairPrice, PriceComponent } from "../domain/types.js";

/** What was last fed to the monitor for a target: its price timestamp, whether it carried components, and whether the stream delivered it. */
export interface FedPrice {
  readonly timestampMs: number;
  readonly withComponents: boolean;
  readonly viaStream: boolean;
  /** The components it carried (shareUnchangedComponents compares the next price's with them). */
  readonly components: readonly PriceComponent[];
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
  return {
    timestampMs: price.timestampMs,
    withComponents: price.components.length > 0,
    viaStream,
    components: price.components,
  };
}

/**
 * The record after feeding `price` over `last`: a poll that only adds components to the price the stream delivered
 * keeps it marked as streamed, so the first poll after a switch back to polling still drops that price.
 */
export function nextFedPrice(last: FedPrice | null, price: PairPrice, viaStream: boolean): FedPrice {
  return fedPrice(price, markedStreamed(last, price, viaStream));
}

/** Whether `price` fed over `last` counts as streamed (see nextFedPrice). */
function markedStreamed(last: FedPrice | null, price: PairPrice, viaStream: boolean): boolean {
  return viaStream || (last !== null && last.viaStream && last.timestampMs === price.timestampMs);
}

/** A target's own FedPrice, rewritten by each price fed to it (see refeed). */
class FedRecord implements FedPrice {
  constructor(
    public timestampMs: number,
    public withComponents: boolean,
    public viaStream: boolean,
    public components: readonly PriceComponent[],
  ) {}
}

/**
 * nextFedPrice for a target's own record: written into `last` when refeed made it, else a new record. The record
 * lives a period (until the next price), long enough to be promoted: one per target instead of one per poll.
 */
export function refeed(last: FedPrice | null, price: PairPrice, viaStream: boolean): FedPrice {
  const streamed = markedStreamed(last, price, viaStream);
  const withComponents = price.components.length > 0;
  if (!(last instanceof FedRecord))
    return new FedRecord(price.timestampMs, withComponents, streamed, price.components);
  last.timestampMs = price.timestampMs;
  last.withComponents = withComponents;
  last.viaStream = streamed;
  last.components = price.components;
  return last;
}

/**
 * Whether a target's next price must be checked against the last one fed: always while it streams (the stream
 * and its polls overlap), and on a polled target until a poll has fed once after a price from the stream (the
 * first poll after a switch back from the stream usually returns the price the stream just gave).
 */
export function checksRepeats(streamed: boolean, last: FedPrice | null): boolean {
  return streamed || last?.viaStream === true;
}

/**
 * Put the components of `previous` back in `next` (freshly decoded, not yet shared) where they are unchanged (same
 * place, source, timestamp and price text). Equal values, older objects: most sources do not move every second, and
 * a component kept from the last poll is one the new body need not carry into the old generation (a snapshot lives
 * a period, long enough for V8 to promote it; measured, the decoded components were a third of what was promoted).
 */
export function shareUnchangedComponents(previous: readonly PriceComponent[], next: PairPrice): PairPrice {
  // the decoder builds a new mutable array per body; the empty one is frozen, and skipped by the bound
  const components = next.components as PriceComponent[];
  const count = Math.min(previous.length, components.length);
  for (let i = 0; i < count; i++) {
    const old = previous[i]!;
    const fresh = components[i]!;
    if (
      old !== fresh &&
      old.source === fresh.source &&
      old.timestampMs === fresh.timestampMs &&
      old.price.sameHexAs(fresh.price)
    )
      components[i] = old;
  }
  return next;
}
