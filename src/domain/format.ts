// Pure text formatting for alert summaries and contexts: windows, percents, ISO times, exact decimals.

/** Format a duration as the API's interval vocabulary where it fits: 10s, 1min, 5min, 1h, 1d; else ms. */
export function formatWindowMs(windowMs: number): string {
  if (windowMs > 0 && windowMs % 86_400_000 === 0) return `${windowMs / 86_400_000}d`;
  if (windowMs > 0 && windowMs % 3_600_000 === 0) return `${windowMs / 3_600_000}h`;
  if (windowMs > 0 && windowMs % 60_000 === 0) return `${windowMs / 60_000}min`;
  if (windowMs > 0 && windowMs % 1_000 === 0) return `${windowMs / 1_000}s`;
  return `${windowMs}ms`;
}

/** Round to at most `maxDecimals` places and drop trailing zeros ("2", "0.015"). */
export function trimNumber(value: number, maxDecimals: number): string {
  const fixed = value.toFixed(maxDecimals);
  return fixed.includes(".") ? fixed.replace(/\.?0+$/, "") : fixed;
}

/** A fraction as a percent with two decimals and an explicit sign: 0.0502 → "+5.02%". */
export function formatSignedPercent(fraction: number): string {
  const text = (fraction * 100).toFixed(2);
  return fraction >= 0 && !text.startsWith("-") ? `+${text}%` : `${text}%`;
}

/** A fraction as a short percent for thresholds: 0.02 → "2%", 0.0001 → "0.01%". */
export function formatPercent(fraction: number): string {
  return `${trimNumber(fraction * 100, 4)}%`;
}

/** Milliseconds since the epoch as ISO 8601; "invalid" for non-finite input rather than throwing. */
export function toIso(ms: number): string {
  const date = new Date(ms);
  return Number.isFinite(date.getTime()) ? date.toISOString() : "invalid";
}

/** Exact decimal text of a finite number's shortest representation, without exponent: 1e-7 → "0.0000001". */
export function numberToDecimalString(value: number): string | null {
  if (!Number.isFinite(value)) return null;
  const text = String(value);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (match === null) return text;
  const sign = match[1] ?? "";
  const digits = (match[2] ?? "") + (match[3] ?? "");
  // Position of the decimal point after shifting by the exponent.
  const point = (match[2] ?? "").length + Number(match[4]);
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${"0".repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** A duration in seconds for summaries: 95000 → "95s", 1500 → "1.5s". */
export function formatDurationMs(durationMs: number): string {
  return `${trimNumber(durationMs / 1000, 1)}s`;
}

/** `a, b, c and 4 more`: at most `maxNames` names (at least one), so a line stays bounded whatever the config. */
export function listNames(names: readonly string[], maxNames: number): string {
  const shown = names.slice(0, Math.max(1, maxNames)).join(", ");
  const more = names.length - Math.max(1, maxNames);
  return more > 0 ? `${shown} and ${more} more` : shown;
}
