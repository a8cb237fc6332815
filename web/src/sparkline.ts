// The SVG path of a sparkline: recent values scaled into a small box (pure; the view puts it in an inline <svg>).

/** One value at one time. */
export interface SeriesPoint {
  readonly atMs: number;
  readonly value: number;
}

/** The box the line is drawn in, in SVG user units; `pad` keeps the stroke inside it. */
export interface SparklineBox {
  readonly width: number;
  readonly height: number;
  readonly pad: number;
}

/** The box of the targets table's sparklines. */
export const SPARKLINE_BOX: SparklineBox = { width: 120, height: 28, pad: 2 };

const round = (n: number): string => (Math.round(n * 10) / 10).toString();

/**
 * The `d` attribute of a path through `points` (oldest first): x by time (by index when all share one time),
 * y from the lowest value at the bottom to the highest at the top; a flat series is a line through the middle,
 * one point a short dash. Points that are not finite are skipped; no point gives "".
 */
export function sparklinePath(points: readonly SeriesPoint[], box: SparklineBox = SPARKLINE_BOX): string {
  const usable = points.filter((p) => Number.isFinite(p.value) && Number.isFinite(p.atMs));
  const first = usable[0];
  const last = usable.at(-1);
  if (first === undefined || last === undefined) return "";
  const innerWidth = box.width - 2 * box.pad;
  const innerHeight = box.height - 2 * box.pad;
  const midY = box.pad + innerHeight / 2;
  if (usable.length === 1)
    return `M${round(box.width - box.pad - 4)} ${round(midY)}H${round(box.width - box.pad)}`;
  const spanMs = last.atMs - first.atMs;
  let min = Infinity;
  let max = -Infinity;
  for (const p of usable) {
    min = Math.min(min, p.value);
    max = Math.max(max, p.value);
  }
  const range = max - min;
  const x = (p: SeriesPoint, index: number): number =>
    box.pad +
    (spanMs > 0 ? ((p.atMs - first.atMs) / spanMs) * innerWidth : (index / (usable.length - 1)) * innerWidth);
  const y = (p: SeriesPoint): number =>
    range > 0 ? box.pad + (1 - (p.value - min) / range) * innerHeight : midY;
  return usable.map((p, index) => `${index === 0 ? "M" : "L"}${round(x(p, index))} ${round(y(p))}`).join("");
}
