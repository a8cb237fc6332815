// Exact price arithmetic on scaled integers: parsing hex/decimal strings and comparing without floats.

// 10 ** -d for the usual scales (the same doubles, without Math.pow per price).
const NEG_POW10: readonly number[] = Array.from({ length: 64 }, (_, d) => 10 ** -d);

/** An exact price: an integer `raw` scaled by 10^`decimals`; `text` is its decimal representation. */
export class ScaledPrice {
  readonly raw: bigint;
  readonly decimals: number;
  #text: string | undefined;
  #approx = Number.NaN;

  constructor(raw: bigint, decimals: number) {
    this.raw = raw;
    this.decimals = decimals;
  }

  /** Decimal string, e.g. "82069.2697737", trailing zeros trimmed; computed once on first use. */
  get text(): string {
    this.#text ??= formatScaled(this.raw, this.decimals);
    return this.#text;
  }

  /** Nearest double of the price (relative error ≈ 1e-16; ±Infinity or NaN beyond the double range); computed once. */
  get approx(): number {
    if (Number.isNaN(this.#approx))
      this.#approx = Number(this.raw) * (NEG_POW10[this.decimals] ?? 10 ** -this.decimals);
    return this.#approx;
  }

  /** JSON form is the decimal string, so prices serialise exactly. */
  toJSON(): string {
    return this.text;
  }
}

const TEN = 10n;
const pow10Cache: bigint[] = [];

/** 10^n as a bigint, cached for the small exponents prices use. */
export function pow10(n: number): bigint {
  if (n < 64) {
    let cached = pow10Cache[n];
    if (cached === undefined) {
      cached = TEN ** BigInt(n);
      pow10Cache[n] = cached;
    }
    return cached;
  }
  return TEN ** BigInt(n);
}

/** Format a scaled integer as a decimal string without going through a float. */
export function formatScaled(raw: bigint, decimals: number): string {
  const negative = raw < 0n;
  const digits = (negative ? -raw : raw).toString();
  if (decimals === 0) return negative ? `-${digits}` : digits;
  const padded = digits.padStart(decimals + 1, "0");
  const whole = padded.slice(0, padded.length - decimals);
  const fraction = padded.slice(padded.length - decimals).replace(/0+$/, "");
  const body = fraction.length > 0 ? `${whole}.${fraction}` : whole;
  return negative ? `-${body}` : body;
}

/** Parse a decimal string ("123.45", "-0.5", "100") into a ScaledPrice with the given decimals; null if malformed. */
export function parseDecimalPrice(text: string, decimals: number): ScaledPrice | null {
  const match = /^(-)?(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (match === null) return null;
  const fraction = match[3] ?? "";
  if (fraction.length > decimals) return null;
  const raw = BigInt((match[2] ?? "0") + fraction.padEnd(decimals, "0"));
  return new ScaledPrice(match[1] === "-" ? -raw : raw, decimals);
}

/** Bring two prices to a common scale so their raw integers compare directly. */
export function toCommonScale(a: ScaledPrice, b: ScaledPrice): readonly [bigint, bigint, number] {
  if (a.decimals === b.decimals) return [a.raw, b.raw, a.decimals];
  if (a.decimals > b.decimals) return [a.raw, b.raw * pow10(a.decimals - b.decimals), a.decimals];
  return [a.raw * pow10(b.decimals - a.decimals), b.raw, b.decimals];
}

/** Compare two prices exactly: negative, zero or positive like a sort comparator. */
export function comparePrices(a: ScaledPrice, b: ScaledPrice): number {
  const [x, y] = toCommonScale(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

const RATIO_SCALE = 1_000_000_000_000n; // 1e12: relative moves keep 12 significant fractional digits

/** Relative change (to - from) / |from| as a fraction, computed in bigint then scaled to a number; null if from is 0. */
export function relativeChange(from: ScaledPrice, to: ScaledPrice): number | null {
  const [x, y] = toCommonScale(from, to);
  if (x === 0n) return null;
  const denominator = x < 0n ? -x : x;
  return Number(((y - x) * RATIO_SCALE) / denominator) / 1e12;
}

/** Absolute relative deviation |a - b| / |b| as a fraction; null if b is 0. */
export function relativeDeviation(a: ScaledPrice, reference: ScaledPrice): number | null {
  const change = relativeChange(reference, a);
  return change === null ? null : Math.abs(change);
}

/**
 * True only when |relativeChange(from, to)| is certainly below `limit`, judged on doubles with a margin
 * (1e-9 relative, far above the ≈1e-12 truncation and ≈1e-15 rounding errors of the two computations);
 * false means "not proven", and the caller falls back to the exact bigint computation.
 */
export function changeProvablyBelow(from: ScaledPrice, to: ScaledPrice, limit: number): boolean {
  return approxChangeProvablyBelow(from.approx, to.approx, limit);
}

/** changeProvablyBelow on the prices' `approx` doubles (e.g. PriceHistory.approxAt); same margin, same guarantee. */
export function approxChangeProvablyBelow(fromApprox: number, toApprox: number, limit: number): boolean {
  const x = fromApprox;
  const magnitude = Math.abs((toApprox - x) / Math.abs(x));
  // NaN and ±Infinity compare false: no proof, exact path.
  return magnitude + 1e-9 * (1 + magnitude) < limit;
}
