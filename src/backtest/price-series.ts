// A price series of bounded size for the backtest's charts: min/max buckets that merge pairwise as points arrive (pure, deterministic).

/** One charted price. */
export interface SeriesPoint {
  readonly atMs: number;
  readonly price: number;
}

/** A run of consecutive points summarised by its lowest and highest (earliest of equals). */
interface Bucket {
  count: number;
  min: SeriesPoint;
  max: SeriesPoint;
}

/** A growing series that never holds more than `2 × maxBuckets` points, keeping every bucket's extremes (spikes stay visible). */
export interface BoundedSeries {
  /** Append a point (points arrive in time order). */
  push(point: SeriesPoint): void;
  /** The kept points in time order: each bucket's min and max (one point when they coincide). */
  points(): SeriesPoint[];
}

/** A bounded series: buckets of `perBucket` points; over `maxBuckets`, neighbours merge and buckets double. */
export function boundedSeries(maxBuckets = 1_500): BoundedSeries {
  let buckets: Bucket[] = [];
  let perBucket = 1;
  return {
    push(point) {
      const last = buckets[buckets.length - 1];
      if (last !== undefined && last.count < perBucket) {
        last.count += 1;
        if (point.price < last.min.price) last.min = point;
        if (point.price > last.max.price) last.max = point;
        return;
      }
      buckets.push({ count: 1, min: point, max: point });
      if (buckets.length <= maxBuckets) return;
      buckets = mergePairs(buckets);
      perBucket *= 2;
    },
    points() {
      return buckets.flatMap(({ min, max }) =>
        min === max ? [min] : min.atMs <= max.atMs ? [min, max] : [max, min],
      );
    },
  };
}

/** Neighbouring buckets merged two by two. */
function mergePairs(buckets: readonly Bucket[]): Bucket[] {
  const merged: Bucket[] = [];
  for (let i = 0; i < buckets.length; i += 2) {
    const a = buckets[i] as Bucket;
    const b = buckets[i + 1];
    if (b === undefined) merged.push(a);
    else
      merged.push({
        count: a.count + b.count,
        min: b.min.price < a.min.price ? b.min : a.min,
        max: b.max.price > a.max.price ? b.max : a.max,
      });
  }
  return merged;
}
