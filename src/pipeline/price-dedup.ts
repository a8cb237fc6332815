// One observation per price timestamp for a target fed by both the stream and polls.
import type { ScaledPrice } from "../domain/price.js";
import type { PairPrice, PriceComponent } from "../domain/types.js";

/** What was last fed to the monitor for a target: its price timestamp, whether it carried components, and whether the stream delivered it. */
export interface FedPrice {
  readonly timestampMs: number;
  readonly withComponents: boolean;
  readonly viaStream: boolean;
  /** The price itself (a polled or streamed target's own store, see storePrice). */
  readonly price: PairPrice;
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
    price,
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
    public price: PairPrice,
  ) {}
}

/**
 * nextFedPrice for a target's own record: written into `last` when refeed made it, else a new record. The record
 * lives a period (until the next price), long enough to be promoted: one per target instead of one per poll.
 */
export function refeed(last: FedPrice | null, price: PairPrice, viaStream: boolean): FedPrice {
  const streamed = markedStreamed(last, price, viaStream);
  const withComponents = price.components.length > 0;
  if (!(last instanceof FedRecord)) return new FedRecord(price.timestampMs, withComponents, streamed, price);
  last.timestampMs = price.timestampMs;
  last.withComponents = withComponents;
  last.viaStream = streamed;
  last.price = price;
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

/** A component of a target's stored price (see storePrice): overwritten in place when the source moves. */
class StoredComponent implements PriceComponent {
  constructor(
    public source: string,
    public price: ScaledPrice,
    public timestampMs: number,
  ) {}
}

/** A target's stored off-chain price (see storePrice): one object per target, rewritten by each price fed. */
class StoredPairPrice implements PairPrice {
  readonly components: StoredComponent[] = [];

  constructor(
    public pairId: string,
    public price: ScaledPrice,
    public numSources: number,
    public timestampMs: number,
  ) {}
}

/**
 * The target's stored price rewritten to `next` (a freshly decoded body, left as garbage), or a new store when
 * `stored` is not one. A snapshot lives a period, long enough for V8 to promote it, so the record, its components
 * array and each component are one object per target instead of new ones per poll; a component whose source,
 * timestamp and hex text are unchanged also keeps its old price. Only the price objects (immutable once decoded)
 * are taken from `next`, so nothing a detector or an alert captured changes: what is overwritten is the container
 * the monitor reads as the target's current snapshot, which each fed price replaces anyway.
 */
export function storePrice(stored: PairPrice | null, next: PairPrice): PairPrice {
  const store =
    stored instanceof StoredPairPrice
      ? stored
      : new StoredPairPrice(next.pairId, next.price, next.numSources, next.timestampMs);
  store.pairId = next.pairId;
  store.price = next.price;
  store.numSources = next.numSources;
  store.timestampMs = next.timestampMs;
  const kept = store.components;
  const fresh = next.components;
  for (let i = 0; i < fresh.length; i++) {
    const { source, price, timestampMs } = fresh[i]!;
    const old = kept[i];
    if (old === undefined) kept.push(new StoredComponent(source, price, timestampMs));
    else if (old.source !== source || old.timestampMs !== timestampMs || !old.price.sameHexAs(price)) {
      old.source = source;
      old.price = price;
      old.timestampMs = timestampMs;
    }
  }
  if (kept.length > fresh.length) kept.length = fresh.length;
  return store;
}
