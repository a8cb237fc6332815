// Synthetic pairs for load benches: the same ones `pragma-monitor simulate --synthetic-pairs N` serves.
export { syntheticPairDefs, syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
