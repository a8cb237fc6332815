// The pair-price URLs the daemon polls for the benches' monitors, built by the daemon's own planTargets + offchainPollQuery.
import type { TargetSpec } from "../../src/domain/types.js";
import { offchainPollQuery, planTargets } from "../../src/pipeline/targets.js";
import { pairPricePath } from "../../src/upstream/pair-price.js";
import { benchConfig, offchainMonitors } from "./config.js";
import { syntheticPairIds } from "./pairs.js";

/** For `pairs` synthetic off-chain monitors at `periodMs` against `baseUrl`: pair id → the exact URL the daemon GETs. */
export function daemonPairPriceUrls(baseUrl: string, pairs: number, periodMs: number): Map<string, string> {
  const config = benchConfig({
    upstream: { url: baseUrl },
    monitors: { offchain: offchainMonitors(syntheticPairIds(pairs), pairs, periodMs) },
  });
  const urls = new Map<string, string>();
  for (const plan of planTargets(config.monitors)) {
    const spec = plan.spec as Extract<TargetSpec, { kind: "offchain" }>;
    urls.set(spec.pair, baseUrl + pairPricePath(offchainPollQuery(spec)));
  }
  return urls;
}
