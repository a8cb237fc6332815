// Bounded, time-ordered price history of one target: a ring buffer covering the longest configured window.
import { ScaledPrice } from "./price.js";

/** Points a history holds at most; spacing between kept points grows with the window so the ring covers it. */
export const HISTORY_CAPACITY = 1024;

/** The least time between two points a history of `capacity` points keeps when it retains `retainMs`. */
export function minSpacingMsFor(retainMs: number, capacity = HISTORY_CAPACITY): number {
  return retainMs / (Math.max(4, capacity) - 2);
}

/** One historical price at a time (ms since the epoch). */
export interface PricePoint {
  readonly atMs: number;
  readonly price: ScaledPrice;
}

/**
 * Points held merged with incoming ones, oldest first, one per timestamp (a held point wins a tie), non-finite
 * times dropped. Incoming `coarse` points (candle closes, one a minute) are dropped inside the time range the
 * held points cover: finer points (polls, a stream's history, a cluster handover) win their range, so a candle
 * never sits between two polls it is coarser than.
 */
export function mergePricePoints(
  held: readonly PricePoint[],
  incoming: readonly PricePoint[],
  coarse: boolean,
): PricePoint[] {
  const firstMs = held[0]?.atMs ?? Number.POSITIVE_INFINITY;
  const lastMs = held[held.length - 1]?.atMs ?? Number.NEGATIVE_INFINITY;
  const outsideHeld = (atMs: number): boolean => !coarse || atMs < firstMs || atMs > lastMs;
  const all = [...held, ...incoming.filter((p) => Number.isFinite(p.atMs) && outsideHeld(p.atMs))];
  all.sort((a, b) => a.atMs - b.atMs); // stable: a held point stays before an incoming one of the same time
  return all.filter((point, i) => i === 0 || all[i - 1]?.atMs !== point.atMs);
}

const INITIAL_SLOTS = 64;
const IN_OBJECTS = 255;
/** A slot's doubles (time, approx) and 32-bit words (2 × 2 for the doubles, 4 for the raw price, its scale, padding). */
const SLOT_DOUBLES = 5;
const SLOT_WORDS = 2 * SLOT_DOUBLES;
/** Where a slot's raw price words and scale sit among its 32-bit words. */
const RAW_WORD = 4;
const SCALE_WORD = 8;
/** Probes of a window lookup placed by interpolation before it bisects. */
const INTERPOLATED_PROBES = 4;

/**
 * Ring buffer of prices ordered by time; memory is fixed at creation. Prices are kept exactly in one buffer
 * (four 32-bit words and the scale, or the object itself for the rare negative / ≥ 2^128 raw value or a scale
 * outside the integers 0 to 254)
 * next to their nearest double, so appends allocate nothing that outlives the call and old prices do not
 * pile up in the old generation; a price decoded from hex is stored from its digits (no bigint per push).
 * priceAt rebuilds an equal ScaledPrice; approxAt reads the double.
 * The values of one slot sit side by side in one buffer (time, approx, raw words, scale: 40 bytes): a push
 * touches one or two cache lines and a single backing store, not one per array (with hundreds of targets,
 * the history is rarely still in cache when its target is polled).
 */
export class PriceHistory {
  /** Points held at most; the arrays start smaller and double up to this as the history fills. */
  readonly capacity: number;
  /** The slots as doubles: slot s holds its time at SLOT_DOUBLES·s, its price's nearest double next. */
  #doubles: Float64Array;
  /**
   * The same buffer as 32-bit words: slot s holds its raw price's four words at SLOT_WORDS·s + RAW_WORD (least
   * significant first, ScaledPrice.writeWords) and its scale at SLOT_WORDS·s + SCALE_WORD (255 = in #objects).
   */
  #words: Uint32Array;
  #objects: (ScaledPrice | undefined)[] | null = null;
  /** Allocated slots (≤ capacity). */
  #slots: number;
  #start = 0;
  #size = 0;
  #retainMs: number;
  /** Mutations so far (a point stored, dropped or re-merged, the retention changed): see `version`. */
  #mutations = 0;

  /**
   * @param epoch Tells this history from the others its owner made (a target's history replaced by a new one): with
   * `mutations`, what `version` returns.
   */
  constructor(
    retainMs: number,
    capacity = HISTORY_CAPACITY,
    readonly epoch = 0,
  ) {
    this.capacity = Math.max(4, capacity);
    this.#slots = Math.min(this.capacity, INITIAL_SLOTS);
    const buffer = new ArrayBuffer(8 * SLOT_DOUBLES * this.#slots);
    this.#doubles = new Float64Array(buffer);
    this.#words = new Uint32Array(buffer);
    this.#retainMs = retainMs;
  }

  get size(): number {
    return this.#size;
  }

  /** How far back the history keeps prices (the longest window that needs it). */
  get retainMs(): number {
    return this.#retainMs;
  }

  set retainMs(value: number) {
    if (value !== this.#retainMs) this.#mutations++; // (it moves the oldest point a window can use)
    this.#retainMs = value;
  }

  /**
   * A token of what the history holds: it changes with every mutation (a point anywhere in the ring stored,
   * replaced or dropped), so the same token means the same points (and the same retention), and reading it copies
   * nothing. `epoch.mutations`: a history made to replace another (same target) never repeats the other's tokens.
   */
  get version(): string {
    return `${this.epoch}.${this.#mutations}`;
  }

  /** Time of the i-th oldest point. */
  timeAt(index: number): number {
    return this.#doubles[SLOT_DOUBLES * ((this.#start + index) % this.#slots)] ?? Number.NaN;
  }

  /** Price of the i-th oldest point (an equal, fresh ScaledPrice), or undefined outside the history. */
  priceAt(index: number): ScaledPrice | undefined {
    if (!(index >= 0 && index < this.#size)) return undefined;
    const slot = (this.#start + index) % this.#slots;
    const decimals = this.#words[SLOT_WORDS * slot + SCALE_WORD] ?? IN_OBJECTS;
    if (decimals === IN_OBJECTS) return this.#objects?.[slot];
    return ScaledPrice.fromWords(this.#words, SLOT_WORDS * slot + RAW_WORD, decimals);
  }

  /** The nearest double of the i-th oldest price (ScaledPrice.approx), NaN outside the history. */
  approxAt(index: number): number {
    if (!(index >= 0 && index < this.#size)) return Number.NaN;
    return this.#doubles[SLOT_DOUBLES * ((this.#start + index) % this.#slots) + 1] ?? Number.NaN;
  }

  /** Append a newer price; same-time duplicates and points closer than the minimum spacing are skipped. */
  push(atMs: number, price: ScaledPrice): void {
    if (!Number.isFinite(atMs)) return;
    if (this.#size > 0) {
      const lastMs = this.#timeOf(this.#size - 1);
      if (atMs < lastMs) {
        this.insertAll([{ atMs, price }]);
        return;
      }
      if (atMs - lastMs < this.minSpacingMs || atMs === lastMs) return;
    }
    if (this.#size === this.#slots) {
      if (this.#slots < this.capacity) this.#grow();
      else this.#dropOldest();
    }
    const slot = this.#slotOf(this.#size);
    this.#mutations++;
    this.#doubles[SLOT_DOUBLES * slot] = atMs;
    this.#store(slot, price);
    this.#size++;
    this.#evictBefore(atMs - this.#retainMs);
  }

  /**
   * Merge points in any order (warm-up, a cluster handover): rebuilds the ring, the rare slow path. Coarse points
   * (candle closes) are kept only outside the time range the history already covers (see mergePricePoints).
   */
  insertAll(points: readonly PricePoint[], coarse = false): void {
    const merged = mergePricePoints(this.points(), points, coarse);
    this.#mutations++;
    this.#start = 0;
    this.#size = 0;
    this.#objects = null;
    for (const point of merged) this.push(point.atMs, point.price);
  }

  /** Every point held, oldest first (fresh objects: a handover encodes them, a rebuild re-inserts them). */
  points(): PricePoint[] {
    const held: PricePoint[] = [];
    for (let i = 0; i < this.#size; i++) {
      const price = this.priceAt(i);
      if (price !== undefined) held.push({ atMs: this.timeAt(i), price });
    }
    return held;
  }

  /**
   * Index of the newest point at or before `atMs`, or -1 when the history does not reach back that far. Polls
   * space points about evenly, so each probe goes where the times between the bounds put the answer (a probe or
   * two, where a plain bisection touched a cache line per probe); after a few, it bisects, so an uneven history
   * still takes O(log n) probes.
   */
  indexAtOrBefore(atMs: number): number {
    let low = 0;
    let high = this.#size - 1;
    let lowMs = high < 0 ? Number.NaN : this.#timeOf(low);
    if (!(lowMs <= atMs)) return -1;
    let highMs = this.#timeOf(high);
    if (highMs <= atMs) return high;
    // time(low) ≤ atMs < time(high), times strictly increasing
    for (let probes = 0; high - low > 1; probes++) {
      const guess = low + Math.floor(((atMs - lowMs) / (highMs - lowMs)) * (high - low));
      const mid =
        probes < INTERPOLATED_PROBES ? Math.min(high - 1, Math.max(low + 1, guess)) : (low + high) >>> 1;
      const midMs = this.#timeOf(mid);
      if (midMs <= atMs) {
        low = mid;
        lowMs = midMs;
      } else {
        high = mid;
        highMs = midMs;
      }
    }
    return low;
  }

  // Time of the i-th oldest point, 0 ≤ i < size.
  #timeOf(index: number): number {
    return this.#doubles[SLOT_DOUBLES * this.#slotOf(index)] ?? Number.NaN;
  }

  /** The least time between two kept points (a thinner history for a longer retention). */
  get minSpacingMs(): number {
    return minSpacingMsFor(this.#retainMs, this.capacity);
  }

  // Keep exactly one point at or before the cutoff: it is the reference of the longest window.
  #evictBefore(cutoffMs: number): void {
    while (this.#size >= 2 && this.#timeOf(1) <= cutoffMs) this.#dropOldest();
  }

  // The slot of the i-th oldest point, 0 ≤ i < size (the ring wraps once at most: no division on the hot path).
  #slotOf(index: number): number {
    const slot = this.#start + index;
    return slot < this.#slots ? slot : slot - this.#slots;
  }

  // Double the buffer (up to capacity), oldest point first at slot 0.
  #grow(): void {
    const slots = Math.min(this.capacity, this.#slots * 2);
    const buffer = new ArrayBuffer(8 * SLOT_DOUBLES * slots);
    const words = new Uint32Array(buffer);
    // word by word: a double's bits are copied as they are
    for (let i = 0; i < this.#size; i++) {
      const from = SLOT_WORDS * this.#slotOf(i);
      for (let k = 0; k < SLOT_WORDS; k++) words[SLOT_WORDS * i + k] = this.#words[from + k] ?? 0;
    }
    if (this.#objects !== null) {
      const objects = new Array<ScaledPrice | undefined>(slots);
      for (let i = 0; i < this.#size; i++) objects[i] = this.#objects[this.#slotOf(i)];
      this.#objects = objects;
    }
    this.#doubles = new Float64Array(buffer);
    this.#words = words;
    this.#slots = slots;
    this.#start = 0;
  }

  #store(slot: number, price: ScaledPrice): void {
    this.#doubles[SLOT_DOUBLES * slot + 1] = price.approx;
    const at = SLOT_WORDS * slot;
    const decimals = price.decimals;
    // a negative or fractional scale would not read back from its Uint32 word: kept as the object
    if (
      Number.isInteger(decimals) &&
      decimals >= 0 &&
      decimals < IN_OBJECTS &&
      price.writeWords(this.#words, at + RAW_WORD)
    ) {
      this.#words[at + SCALE_WORD] = decimals;
      if (this.#objects !== null) this.#objects[slot] = undefined;
    } else {
      this.#words[at + SCALE_WORD] = IN_OBJECTS;
      (this.#objects ??= new Array<ScaledPrice | undefined>(this.#slots))[slot] = price;
    }
  }

  #dropOldest(): void {
    if (this.#objects !== null) this.#objects[this.#start] = undefined;
    this.#start = (this.#start + 1) % this.#slots;
    this.#size--;
  }
}
