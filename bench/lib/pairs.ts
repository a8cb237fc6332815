// Synthetic pairs for load benches: the simulator knows only 8 real pairs, so benches add N letter-only pairs.
import { DEFAULT_PAIRS, type PairDef } from "../../src/simulator/catalog.js";

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
