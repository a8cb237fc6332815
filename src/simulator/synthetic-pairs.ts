// Synthetic pairs for load tests: the catalogue has 8 real pairs, so `simulate --synthetic-pairs N` and the benches add N letter-only ones.
import { DEFAULT_PAIRS, type PairDef } from "./catalog.js";

/** `count` distinct LETTERS/USD pair ids ("QAAA/USD", "QAAB/USD", ...), valid for config and client validation. */
export function syntheticPairIds(count: number): string[] {
  const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const a = letters[Math.floor(i / 676) % 26]!;
    const b = letters[Math.floor(i / 26) % 26]!;
    const c = letters[i % 26]!;
    out.push(`Q${a}${b}${c}/USD`);
  }
  return out;
}

/** Simulator pair definitions for `syntheticPairIds(count)`, each modelled on one of the default pairs. */
export function syntheticPairDefs(count: number): PairDef[] {
  return syntheticPairIds(count).map((pairId, i) => ({
    ...DEFAULT_PAIRS[i % DEFAULT_PAIRS.length]!,
    pairId,
  }));
}

/** The catalogue's pairs followed by `count` synthetic ones (what `simulate --synthetic-pairs N` serves). */
export function pairsWithSynthetic(count: number): PairDef[] {
  return [...DEFAULT_PAIRS, ...syntheticPairDefs(count)];
}

/** Most synthetic pairs a simulator serves: the ids have 3 letters (26³). */
export const MAX_SYNTHETIC_PAIRS = 26 ** 3;
