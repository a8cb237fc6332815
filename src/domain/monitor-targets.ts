// The monitor's target registry: per-target data plus the pair indexes that link on-chain and off-chain targets.
import { createTargetData, setHistoryRetention, type TargetData } from "./target-state.js";
import type { TargetSpec } from "./types.js";

/** Targets by id, and the pair indexes used by the cross-market deviation rule. */
export interface TargetRegistry {
  readonly byId: Map<string, TargetData>;
  /** pair → id of the off-chain spot target that represents it. */
  readonly offchainSpotByPair: Map<string, string>;
  /** pair → ids of on-chain targets of that pair. */
  readonly onchainByPair: Map<string, Set<string>>;
  /** pair → how many price targets (off-chain, on-chain) have it: its size is the number of pairs monitored. */
  readonly pricePairs: Map<string, number>;
  /** Price histories made so far: each new one takes the next number as its epoch (`PriceHistory.version`). */
  historiesMade: number;
}

/** An empty registry. */
export function createTargetRegistry(): TargetRegistry {
  return {
    byId: new Map(),
    offchainSpotByPair: new Map(),
    onchainByPair: new Map(),
    pricePairs: new Map(),
    historiesMade: 0,
  };
}

const specKey = (spec: TargetSpec): string => JSON.stringify(spec);

/** The data of a target, created (or reset when its spec changed) as needed; history sized to `retainMs`. */
export function ensureTarget(registry: TargetRegistry, spec: TargetSpec, retainMs: number): TargetData {
  let data = registry.byId.get(spec.id);
  if (data === undefined) {
    data = createTargetData(spec);
    registry.byId.set(spec.id, data);
    index(registry, data);
  } else if (data.spec !== spec) {
    if (specKey(data.spec) !== specKey(spec)) {
      // Same id, different target: forget what was learnt about the old one.
      registry.byId.delete(spec.id);
      unindex(registry, data);
      data = createTargetData(spec);
      registry.byId.set(spec.id, data);
      index(registry, data);
    } else data.spec = spec;
  }
  setHistoryRetention(data, retainMs, () => ++registry.historiesMade);
  return data;
}

/** Forget a target and repair the pair indexes. */
export function removeTarget(registry: TargetRegistry, id: string): void {
  const data = registry.byId.get(id);
  if (data === undefined) return;
  registry.byId.delete(id);
  unindex(registry, data);
}

/** The off-chain spot target of a pair, if one is monitored. */
export function offchainSpotFor(registry: TargetRegistry, pair: string): TargetData | undefined {
  const id = registry.offchainSpotByPair.get(pair);
  return id === undefined ? undefined : registry.byId.get(id);
}

function index(registry: TargetRegistry, data: TargetData): void {
  const spec = data.spec;
  if (spec.kind === "offchain" || spec.kind === "onchain")
    registry.pricePairs.set(spec.pair, (registry.pricePairs.get(spec.pair) ?? 0) + 1);
  if (spec.kind === "offchain" && spec.entryType === "spot" && !registry.offchainSpotByPair.has(spec.pair))
    registry.offchainSpotByPair.set(spec.pair, spec.id);
  if (spec.kind === "onchain") {
    let ids = registry.onchainByPair.get(spec.pair);
    if (ids === undefined) {
      ids = new Set();
      registry.onchainByPair.set(spec.pair, ids);
    }
    ids.add(spec.id);
  }
}

function unindex(registry: TargetRegistry, data: TargetData): void {
  const spec = data.spec;
  if (spec.kind === "offchain" || spec.kind === "onchain") {
    const count = (registry.pricePairs.get(spec.pair) ?? 0) - 1;
    if (count > 0) registry.pricePairs.set(spec.pair, count);
    else registry.pricePairs.delete(spec.pair);
  }
  if (spec.kind === "offchain" && registry.offchainSpotByPair.get(spec.pair) === spec.id) {
    registry.offchainSpotByPair.delete(spec.pair);
    for (const other of registry.byId.values())
      if (
        other.spec.kind === "offchain" &&
        other.spec.entryType === "spot" &&
        other.spec.pair === spec.pair
      ) {
        registry.offchainSpotByPair.set(spec.pair, other.spec.id);
        break;
      }
  }
  if (spec.kind === "onchain") {
    const ids = registry.onchainByPair.get(spec.pair);
    ids?.delete(spec.id);
    if (ids?.size === 0) registry.onchainByPair.delete(spec.pair);
  }
}
