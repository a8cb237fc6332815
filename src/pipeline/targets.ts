// Turns the `monitors` config into target specs with stable ids, and knows how to fetch each kind of target.
import type { MonitorsConfig } from "../config/types.js";
import type { FundingRate, FundingRatePage, TargetSpec } from "../domain/types.js";
import type { PragmaClient } from "../upstream/types.js";
import type { CallOptions, EndpointName, PairPriceQuery } from "../upstream/types.js";
import { offchainTransport } from "../config/notes.js";
import { componentsSupported, type Transport } from "../upstream/server-rules.js";

/** A target to poll (or stream): what to fetch, how often, how, and a key that changes whenever it must restart (a transport change alone switches it in place). */
export interface TargetPlan {
  readonly spec: TargetSpec;
  readonly periodMs: number;
  /** Off-chain spot medians may stream; everything else polls. */
  readonly transport: Transport;
  readonly key: string;
}

/** Build the deduplicated list of targets the config asks for; identical entries share one target (one request). */
export function planTargets(
  monitors: MonitorsConfig,
  defaultTransport: Transport = "poll",
): readonly TargetPlan[] {
  const plans = new Map<string, TargetPlan>();
  const add = (spec: TargetSpec, periodMs: number, transport: Transport = "poll"): void => {
    const existing = plans.get(spec.id);
    // two identical monitors at different periods: poll at the faster one (and stream if either asks to)
    if (existing !== undefined && existing.periodMs <= periodMs && existing.transport === transport) return;
    const merged = existing?.transport === "stream" ? "stream" : transport;
    const fastestMs = Math.min(periodMs, existing?.periodMs ?? periodMs);
    plans.set(spec.id, {
      spec,
      periodMs: fastestMs,
      transport: merged,
      key: `${spec.id}@${fastestMs}`,
    });
  };
  for (const m of monitors.offchain) {
    const expiry = m.entryType === "future" ? m.expiry : null;
    const id = `offchain:${m.pair}:${m.entryType}:${m.aggregation}:${m.interval}${expiry === null ? "" : `:${expiry}`}`;
    add(
      {
        kind: "offchain",
        id,
        pair: m.pair,
        entryType: m.entryType,
        aggregation: m.aggregation,
        interval: m.interval,
        expiry,
      },
      m.periodMs,
      offchainTransport(m, defaultTransport).transport,
    );
  }
  for (const m of monitors.onchain) {
    const id = `onchain:${m.network}:${m.pair}:${m.aggregation}`;
    add({ kind: "onchain", id, pair: m.pair, network: m.network, aggregation: m.aggregation }, m.periodMs);
  }
  for (const m of monitors.publishers) {
    const id = `publishers:${m.network}:${m.publisherType}`;
    add({ kind: "publishers", id, network: m.network, publisherType: m.publisherType }, m.periodMs);
  }
  for (const m of monitors.funding) {
    add({ kind: "funding", id: `funding:${m.pair}:${m.source}`, pair: m.pair, source: m.source }, m.periodMs);
  }
  for (const m of monitors.vaults) {
    add({ kind: "vault", id: `vault:${m.id}`, vaultId: m.id }, m.periodMs);
  }
  return [...plans.values()];
}

/** The pair-price query an off-chain target polls (the benches build the daemon's exact URLs from it). */
export function offchainPollQuery(spec: Extract<TargetSpec, { kind: "offchain" }>): PairPriceQuery {
  return {
    pair: spec.pair,
    entryType: spec.entryType,
    aggregation: spec.aggregation,
    interval: spec.interval,
    routing: true,
    // The live server fails twap with components (500): a twap target is polled without them.
    withComponents: componentsSupported(spec.aggregation),
    ...(spec.expiry === null ? {} : { expiry: spec.expiry }),
  };
}

/** The upstream endpoint a target polls (the `endpoint` label of poll metrics). */
export function endpointOf(spec: TargetSpec): EndpointName {
  switch (spec.kind) {
    case "offchain":
      return "pair_price";
    case "onchain":
      return "onchain";
    case "publishers":
      return "publishers";
    case "funding":
      return "funding_rates";
    case "vault":
      return "vault";
  }
}

/** How far back the funding poll looks: enough minute points to see the latest rate. */
const FUNDING_LOOKBACK_S = 3 * 3600;

/** Fetches one target's snapshot at a time (`nowMs` is the poll's time); rejects with a PmError. */
export type TargetFetcher = (signal: AbortSignal, nowMs: number) => Promise<unknown>;

/**
 * How a target's polls fetch: its query made once, so the client builds and splits its URL once for all of its
 * polls (the funding query moves with time and is made per poll).
 */
export function targetFetcher(client: PragmaClient, spec: TargetSpec): TargetFetcher {
  switch (spec.kind) {
    case "offchain": {
      const query = offchainPollQuery(spec);
      const callWith = callOptionsFor();
      return (signal) => client.getPairPrice(query, callWith(signal));
    }
    case "onchain": {
      const query = {
        pair: spec.pair,
        network: spec.network,
        aggregation: spec.aggregation,
        routing: true,
        components: true,
        variations: true,
      };
      const callWith = callOptionsFor();
      return (signal) => client.getOnchainEntry(query, callWith(signal));
    }
    case "publishers": {
      const query = { network: spec.network, publisherType: spec.publisherType };
      const callWith = callOptionsFor();
      return (signal) => client.getOnchainPublishers(query, callWith(signal));
    }
    case "funding":
      return (signal, nowMs) => latestFundingRates(client, spec.pair, spec.source, nowMs, signal);
    case "vault": {
      const callWith = callOptionsFor();
      return (signal) => client.getVault(spec.vaultId, callWith(signal));
    }
  }
}

/**
 * The call options of a target's polls: one object per abort signal, not per poll (a poll stream passes the same
 * signal to its polls until one is aborted).
 */
function callOptionsFor(): (signal: AbortSignal) => CallOptions {
  let last: CallOptions = {};
  return (signal) => {
    if (last.signal !== signal) last = { signal };
    return last;
  };
}

/** The funding rates of the last few hours, oldest first (one page of up to 1000 points). */
async function latestFundingRates(
  client: PragmaClient,
  pair: string,
  source: string,
  nowMs: number,
  signal: AbortSignal,
): Promise<readonly FundingRate[]> {
  const endS = Math.floor(nowMs / 1000);
  const page = await client.getFundingRates(
    {
      pair,
      source,
      rangeS: { start: endS - FUNDING_LOOKBACK_S, end: endS },
      frequency: "Minute",
      page: 1,
      pageSize: 1000,
    },
    { signal },
  );
  return fundingSnapshot(page);
}

/** What a funding poll feeds the engine: the page's rates, oldest first (backtest replays recorded pages through it). */
export function fundingSnapshot(page: FundingRatePage): readonly FundingRate[] {
  return [...page.rates].sort((a, b) => a.timestampMs - b.timestampMs);
}
