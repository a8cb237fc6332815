// Shared pipeline test helpers: a monitors config of spot/median off-chain pairs with every timing knob off.
import type { MonitorsConfig } from "../../src/config/types.js";

/** Off-chain spot median pairs at 1 s interval; no jitter, spread, coalescing or warm-up. */
export function offchainMonitors(
  offchain: ReadonlyArray<{ pair: string; periodMs: number }>,
): MonitorsConfig {
  return {
    offchain: offchain.map((m) => ({
      ...m,
      entryType: "spot",
      aggregation: "median",
      interval: "1s",
      expiry: null,
      transport: null,
    })),
    onchain: [],
    publishers: [],
    funding: [],
    vaults: [],
    jitter: 0,
    spreadMs: 0,
    coalesceMs: 0,
    maxBackoffMs: 8_000,
    warmup: { enabled: false, interval: "1min", lookbackMs: 0 },
  };
}
