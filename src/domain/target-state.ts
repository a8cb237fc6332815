// Per-target data the detectors read: last good snapshot, latest price, bounded history, consecutive failures.
import type { PmError } from "./errors.js";
import type { PollObservation } from "./observation.js";
import { parseDecimalPrice, type ScaledPrice } from "./price.js";
import { HISTORY_CAPACITY, PriceHistory } from "./price-history.js";
import type {
  FundingRate,
  OnchainEntrySet,
  OnchainPublisher,
  PairPrice,
  TargetSpec,
  Vault,
} from "./types.js";

/** The last successful snapshot of a target, tagged by target kind. */
export type Snapshot =
  | { readonly kind: "offchain"; readonly value: PairPrice }
  | { readonly kind: "onchain"; readonly value: OnchainEntrySet }
  | { readonly kind: "publishers"; readonly value: readonly OnchainPublisher[] }
  | { readonly kind: "funding"; readonly value: readonly FundingRate[] }
  | { readonly kind: "vault"; readonly value: Vault };

/**
 * A snapshot as stored: a class rather than an object literal so V8 never pretenures it (a literal site
 * whose first objects all survive, as every target's first snapshot does, gets its later objects
 * allocated in the old generation; see DecodedPairPrice in upstream/pair-price.ts).
 */
class TaggedSnapshot<K extends Snapshot["kind"], V> {
  constructor(
    readonly kind: K,
    readonly value: V,
  ) {}
}

/** Mutable state of one target (owned by the monitor state). */
export interface TargetData {
  spec: TargetSpec;
  snapshot: Snapshot | null;
  /** When the last good snapshot was observed. */
  observedAtMs: number;
  /** Latest price (aggregate, or vault share price) and its own timestamp. */
  price: ScaledPrice | null;
  priceTimestampMs: number;
  /** False when on-chain decimals are unknown: the price must not be compared. */
  priceComparable: boolean;
  failures: number;
  lastError: PmError | null;
  failingSinceMs: number;
  /** When the latest poll, failed or not, was observed (NaN before one): how recent its verdict is. */
  lastPollAtMs: number;
  history: PriceHistory | null;
  /** What the evaluator that last ran on the target resolved for it (its rule slots), so a poll needs no lookup. */
  resolved: ResolvedRules | null;
}

/** The part of an evaluator's resolution of a target that the data keeps: which evaluator, for which spec. */
export interface ResolvedRules {
  /** A token of the evaluator that resolved it (another evaluator resolves again). */
  readonly owner: object;
  readonly spec: TargetSpec;
}

/** Fresh state of a target that has not been polled yet. */
export function createTargetData(spec: TargetSpec): TargetData {
  return {
    spec,
    snapshot: null,
    observedAtMs: Number.NaN,
    price: null,
    priceTimestampMs: Number.NaN,
    priceComparable: false,
    failures: 0,
    lastError: null,
    failingSinceMs: Number.NaN,
    lastPollAtMs: Number.NaN,
    history: null,
    resolved: null,
  };
}

/**
 * Keep the history sized to the longest window that needs it (0 = no history kept); a history made numbers itself
 * with `nextEpoch()` (its owner's count of histories made, so its version tokens never repeat a replaced one's).
 */
export function setHistoryRetention(data: TargetData, retainMs: number, nextEpoch: () => number): void {
  if (retainMs <= 0) data.history = null;
  else if (data.history === null) data.history = new PriceHistory(retainMs, HISTORY_CAPACITY, nextEpoch());
  else if (data.history.retainMs !== retainMs) data.history.retainMs = retainMs;
}

/** Fold a poll outcome into the target: success replaces the snapshot and feeds history, failure counts. */
export function applyPoll(data: TargetData, observation: PollObservation): void {
  const { result } = observation;
  data.lastPollAtMs = observation.observedAtMs;
  if (!result.ok) {
    if (data.failures === 0) data.failingSinceMs = observation.observedAtMs;
    data.failures++;
    data.lastError = result.error;
    return;
  }
  data.failures = 0;
  data.lastError = null;
  data.observedAtMs = observation.observedAtMs;
  switch (observation.kind) {
    case "offchain": {
      const value = observation.result.ok ? observation.result.value : null;
      if (value === null) return;
      data.snapshot = new TaggedSnapshot("offchain", value);
      setPrice(data, value.price, value.timestampMs, true);
      return;
    }
    case "onchain": {
      const value = observation.result.ok ? observation.result.value : null;
      if (value === null) return;
      data.snapshot = new TaggedSnapshot("onchain", value);
      setPrice(data, value.price, value.lastUpdatedMs, value.decimalsKnown);
      return;
    }
    case "publishers":
      if (observation.result.ok) data.snapshot = new TaggedSnapshot("publishers", observation.result.value);
      return;
    case "funding":
      if (observation.result.ok) data.snapshot = new TaggedSnapshot("funding", observation.result.value);
      return;
    case "vault": {
      const value = observation.result.ok ? observation.result.value : null;
      if (value === null) return;
      data.snapshot = new TaggedSnapshot("vault", value);
      // The vault has no timestamp of its own: the share price is as of the observation.
      const share = parseShareText(value.sharePrice);
      if (share === null) {
        data.price = null;
        data.priceComparable = false;
      } else setPrice(data, share, observation.observedAtMs, true);
      return;
    }
  }
}

function setPrice(data: TargetData, price: ScaledPrice, timestampMs: number, comparable: boolean): void {
  data.price = price;
  data.priceTimestampMs = timestampMs;
  data.priceComparable = comparable && price.isPositive();
  // An unreadable scale or a zero price would poison every later window comparison.
  if (data.priceComparable && data.history !== null) data.history.push(timestampMs, price);
}

/** Parse a vault's decimal share price exactly (its own number of decimals); null when malformed. */
export function parseShareText(text: string): ScaledPrice | null {
  const trimmed = text.trim();
  const dot = trimmed.indexOf(".");
  return parseDecimalPrice(trimmed, dot < 0 ? 0 : trimmed.length - dot - 1);
}
