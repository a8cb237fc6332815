// Bounded, time-ordered price history of one target: a ring buffer covering the longest configured window.
import type { ScaledPrice } from "./price.js";

/** Points a history holds at most; spacing between kept points grows with the window so the ring covers it. */
export const HISTORY_CAPACITY = 1024;

/** One historical price at a time (ms since the epoch). */
export interface HistoryPoint {
  readonly atMs: number;
  readonly price: ScaledPrice;
}

/** Ring buffer of prices ordered by time; memory is fixed at creation. */
export class PriceHistory {
  readonly capacity: number;
  readonly #timesMs: Float64Array;
  readonly #prices: (ScaledPrice | undefined)[];
  #start = 0;
  #size = 0;
  #retainMs: number;

  constructor(retainMs: number, capacity = HISTORY_CAPACITY) {
    this.capacity = Math.max(4, capacity);
    this.#timesMs = new Float64Array(this.capacity);
    this.#prices = new Array<ScaledPrice | undefined>(this.capacity);
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
    this.#retainMs = value;
  }

  /** Time of the i-th oldest point. */
  timeAt(index: number): number {
    return this.#timesMs[(this.#start + index) % this.capacity] ?? Number.NaN;
  }

  /** Price of the i-th oldest point. */
  priceAt(index: number): ScaledPrice | undefined {
    return this.#prices[(this.#start + index) % this.capacity];
  }

  /** Append a newer price; same-time duplicates and points closer than the minimum spacing are skipped. */
  push(atMs: number, price: ScaledPrice): void {
    if (!Number.isFinite(atMs)) return;
    if (this.#size > 0) {
      const lastMs = this.timeAt(this.#size - 1);
      if (atMs < lastMs) {
        this.insertAll([{ atMs, price }]);
        return;
      }
      if (atMs - lastMs < this.#minSpacingMs() || atMs === lastMs) return;
    }
    if (this.#size === this.capacity) this.#dropOldest();
    const slot = (this.#start + this.#size) % this.capacity;
    this.#timesMs[slot] = atMs;
    this.#prices[slot] = price;
    this.#size++;
    this.#evictBefore(atMs - this.#retainMs);
  }

  /** Merge points in any order (warm-up from candles): rebuilds the ring, the rare slow path. */
  insertAll(points: readonly HistoryPoint[]): void {
    const merged: HistoryPoint[] = [];
    for (let i = 0; i < this.#size; i++) {
      const price = this.priceAt(i);
      if (price !== undefined) merged.push({ atMs: this.timeAt(i), price });
    }
    for (const point of points) if (Number.isFinite(point.atMs)) merged.push(point);
    merged.sort((a, b) => a.atMs - b.atMs);
    this.#start = 0;
    this.#size = 0;
    this.#prices.fill(undefined);
    for (const point of merged) this.push(point.atMs, point.price);
  }

  /** Index of the newest point at or before `atMs`, or -1 when the history does not reach back that far. */
  indexAtOrBefore(atMs: number): number {
    let low = 0;
    let high = this.#size - 1;
    let found = -1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      if (this.timeAt(mid) <= atMs) {
        found = mid;
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
    return found;
  }

  #minSpacingMs(): number {
    return this.#retainMs / (this.capacity - 2);
  }

  // Keep exactly one point at or before the cutoff: it is the reference of the longest window.
  #evictBefore(cutoffMs: number): void {
    while (this.#size >= 2 && this.timeAt(1) <= cutoffMs) this.#dropOldest();
  }

  #dropOldest(): void {
    this.#prices[this.#start] = undefined;
    this.#start = (this.#start + 1) % this.capacity;
    this.#size--;
  }
}
