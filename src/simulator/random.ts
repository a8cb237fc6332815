// Stateless seeded randomness: integer hashing and value noise, so any instant of the market is computable on demand.

/** Mix 32-bit integers into one well-distributed 32-bit hash (murmur3-style finaliser per input). */
export function hash32(seed: number, a: number, b = 0, c = 0): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  h = mix(h, a);
  h = mix(h, b);
  h = mix(h, c);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function mix(h: number, value: number): number {
  // Split large (ms-timestamp sized) numbers into two 32-bit halves so no bits are lost.
  const low = value | 0;
  const high = Math.floor(value / 4294967296) | 0;
  let k = Math.imul(low ^ Math.imul(high, 0x27d4eb2f), 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) >>> 0;
}

/** Uniform number in [0, 1) derived from the hash inputs. */
export function uniform(seed: number, a: number, b = 0, c = 0): number {
  return hash32(seed, a, b, c) / 4294967296;
}

/** Approximately standard-normal number (sum of four uniforms, rescaled): cheap and deterministic. */
export function gaussian(seed: number, a: number, b = 0, c = 0): number {
  const sum =
    uniform(seed, a, b, c) +
    uniform(seed ^ 0x68e31da4, a, b, c) +
    uniform(seed ^ 0x1b56c4e9, a, b, c) +
    uniform(seed ^ 0x7f4a7c15, a, b, c);
  return (sum - 2) * 1.7320508075688772; // variance of the sum is 4/12, so scale by sqrt(3)
}

/** Stable 32-bit hash of a string (FNV-1a), used to key noise streams by pair, source or publisher name. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Linearly interpolated gaussian value noise with knots every `scaleMs`: continuous, random-access in time. */
export function valueNoise(seed: number, stream: number, timeMs: number, scaleMs: number): number {
  const position = timeMs / scaleMs;
  const knot = Math.floor(position);
  const fraction = position - knot;
  const left = gaussian(seed, stream, knot, scaleMs);
  const right = gaussian(seed, stream, knot + 1, scaleMs);
  return left + (right - left) * fraction;
}

/** Knot spacings of the fractal walk, from one second to one week. */
const WALK_SCALES_MS = [1_000, 10_000, 60_000, 600_000, 3_600_000, 21_600_000, 86_400_000, 604_800_000];

/** Brownian-like walk value at `timeMs` with unit variance per ms^0.5: a sum of value noise over many scales. */
export function fractalWalk(seed: number, stream: number, timeMs: number): number {
  let total = 0;
  for (const scaleMs of WALK_SCALES_MS) {
    // Amplitude grows with sqrt(scale) so increments over any horizon scale roughly like a random walk.
    total += valueNoise(seed, stream, timeMs, scaleMs) * Math.sqrt(scaleMs) * 0.5;
  }
  return total;
}

/** 0x-prefixed 63-hex-digit pseudo transaction hash (Starknet felt sized), deterministic in its inputs. */
export function pseudoTxHash(seed: number, a: number, b: number, c: number): string {
  let out = "";
  for (let i = 0; out.length < 64; i++) {
    out += hash32(seed + i * 0x9e37, a, b, c)
      .toString(16)
      .padStart(8, "0");
  }
  return `0x${out.slice(1, 64)}`;
}
