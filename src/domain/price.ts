// Exact price arithmetic on scaled integers: parsing hex/decimal strings and comparing without floats.

// 10 ** -d for the usual scales (the same doubles, without Math.pow per price).
const NEG_POW10: readonly number[] = Array.from({ length: 64 }, (_, d) => 10 ** -d);
/** Most hex digits a price may have: 64 is 256 bits, so hostile text cannot make BigInt work hard. */
const MAX_HEX_DIGITS = 64;
/** Hex digits read into one exact double (13 × 4 = 52 bits). */
const HALF_DIGITS = 13;
const TWO_52 = 2 ** 52;
/** The range writeWords stores: four 32-bit words. */
const TWO_128 = 1n << 128n;
const WORD_MASK = 0xffffffffn;
const TWO_21 = 2 ** 21;
const TWO_32 = 2 ** 32;
// Value of each ASCII hex digit, -1 for every other code unit below 128.
const HEX_VALUE: Int8Array = (() => {
  const table = new Int8Array(128).fill(-1);
  for (let i = 0; i < 10; i++) table[48 + i] = i;
  for (let i = 0; i < 6; i++) table[65 + i] = table[97 + i] = 10 + i;
  return table;
})();

/** The double 10^-decimals the approx of a price is scaled by. */
function scaleDown(decimals: number): number {
  return NEG_POW10[decimals] ?? 10 ** -decimals;
}

/**
 * An exact price: an integer `raw` scaled by 10^`decimals`; `text` is its decimal representation.
 *
 * A price decoded from hex (ScaledPrice.fromHex) keeps its text and builds the bigint on first use of
 * `raw`: detectors judge calm prices on `approx`, which fromHex computes exactly from the digits, so the
 * components of a calm body never become bigints (V8's BigInt parser and BigInt-to-double conversion
 * were the decoder's largest cost).
 */
export class ScaledPrice {
  #raw: bigint | undefined;
  /** The "0x…" text of a price from fromHex, until `raw` is built from it. */
  #hex: string | undefined;
  readonly decimals: number;
  #text: string | undefined;
  #approx = Number.NaN;

  constructor(raw: bigint, decimals: number) {
    this.#raw = raw;
    this.#hex = undefined;
    this.decimals = decimals;
  }

  /**
   * The price of "0x"-prefixed hex text of 1 to 64 digits (either case), or null for any other text.
   * Up to 26 digits are read as two exact 52-bit halves, so `approx` is the correctly rounded double
   * of the integer, the same as Number(raw) gives; longer text is parsed by BigInt at once.
   */
  static fromHex(text: string, decimals: number): ScaledPrice | null {
    const length = text.length;
    if (length < 3 || length > 2 + MAX_HEX_DIGITS) return null;
    if (text.charCodeAt(0) !== 48 || text.charCodeAt(1) !== 120) return null; // "0x"
    const split = Math.max(2, length - HALF_DIGITS);
    const high = hexValue(text, 2, split);
    const low = hexValue(text, split, length);
    if (Number.isNaN(high) || Number.isNaN(low)) return null;
    if (length > 2 + 2 * HALF_DIGITS) return new ScaledPrice(BigInt(text), decimals); // digits checked
    const price = new ScaledPrice(0n, decimals);
    price.#raw = undefined;
    price.#hex = text;
    price.#approx = (high * TWO_52 + low) * scaleDown(decimals);
    return price;
  }

  /** The exact scaled integer. */
  get raw(): bigint {
    let raw = this.#raw;
    if (raw === undefined) {
      raw = BigInt(this.#hex ?? "0");
      this.#raw = raw;
      this.#hex = undefined;
    }
    return raw;
  }

  /** Decimal string, e.g. "82069.2697737", trailing zeros trimmed; computed once on first use. */
  get text(): string {
    this.#text ??= formatScaled(this.raw, this.decimals);
    return this.#text;
  }

  /** Nearest double of the price (relative error ≈ 1e-16; ±Infinity or NaN beyond the double range); computed once. */
  get approx(): number {
    if (Number.isNaN(this.#approx)) this.#approx = Number(this.raw) * scaleDown(this.decimals);
    return this.#approx;
  }

  /** Whether the price is above zero; a price decoded from hex answers from its digits, without building the bigint. */
  isPositive(): boolean {
    const hex = this.#hex;
    if (hex === undefined) return this.raw > 0n;
    for (let i = 2; i < hex.length; i++) if (hex.charCodeAt(i) !== 48) return true;
    return false;
  }

  /**
   * Whether both prices were decoded from the same hex text at the same scale and neither built its bigint yet:
   * a cheap test that never says yes for different values (equal values written differently, or already
   * turned into bigints, answer no).
   */
  sameHexAs(other: ScaledPrice): boolean {
    return this.#hex !== undefined && this.#hex === other.#hex && this.decimals === other.decimals;
  }

  /**
   * Write `raw` as four 32-bit words, least significant first, at `words[offset]` and answer true when 0 ≤ raw <
   * 2^128; else write nothing and answer false. A price still held as hex text (at most 26 digits, see fromHex) is
   * read from its digits: storing it (PriceHistory, once per poll) builds no bigint.
   */
  writeWords(words: Uint32Array, offset: number): boolean {
    const hex = this.#hex;
    if (hex !== undefined) {
      for (let k = 0, end = hex.length; k < 4; k++, end -= 8)
        words[offset + k] = end > 2 ? hexValue(hex, Math.max(2, end - 8), end) : 0;
      return true;
    }
    let rest = this.raw;
    if (rest < 0n || rest >= TWO_128) return false;
    for (let k = 0; k < 4; k++, rest >>= 32n) words[offset + k] = Number(rest & WORD_MASK);
    return true;
  }

  /** The price whose raw integer writeWords wrote at `words[offset]`, at scale `decimals`. */
  static fromWords(words: Uint32Array, offset: number, decimals: number): ScaledPrice {
    const high = words[offset + 3] ?? 0;
    const middle = words[offset + 2] ?? 0;
    // below 2^85 (the usual prices at 18 decimals): the top 53 bits are one exact double, two bigints in all
    if (high === 0 && middle < TWO_21) {
      const top = BigInt(middle * TWO_32 + (words[offset + 1] ?? 0));
      return new ScaledPrice((top << 32n) | BigInt(words[offset] ?? 0), decimals);
    }
    let raw = 0n;
    for (let k = 3; k >= 0; k--) raw = (raw << 32n) | BigInt(words[offset + k] ?? 0);
    return new ScaledPrice(raw, decimals);
  }

  /** JSON form is the decimal string, so prices serialise exactly. */
  toJSON(): string {
    return this.text;
  }
}

/**
 * Value of the hex digits text[from, to) as a double (exact while there are at most 13 of them), NaN if
 * one is not a hex digit; 0 for an empty range.
 */
function hexValue(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i);
    const digit = code < 128 ? (HEX_VALUE[code] ?? -1) : -1;
    if (digit < 0) return Number.NaN;
    value = value * 16 + digit;
  }
  return value;
}

const TEN = 10n;
/** 10^0 … 10^63, computed once: the exponents prices use. */
const POW10: readonly bigint[] = Object.freeze(Array.from({ length: 64 }, (_, n) => TEN ** BigInt(n)));

/** 10^n as a bigint, from the table for the small exponents prices use. */
export function pow10(n: number): bigint {
  return POW10[n] ?? TEN ** BigInt(n);
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
