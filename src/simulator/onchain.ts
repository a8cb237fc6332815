// On-chain model: publishers push each feed on a heartbeat or a deviation; entry sets and publisher stats derive from pushes.
import type { Network } from "../domain/types.js";
import type { FeedDef, PublisherDef } from "./catalog.js";
import { median } from "./format.js";
import { midPrice, type Market, type PairModel } from "./market.js";
import { gaussian, hashString, pseudoTxHash, uniform } from "./random.js";
import { sourcePriceAt, sourceUpdateMs } from "./sources.js";

/** Publishers push every feed at least this often. */
export const HEARTBEAT_MS = 60_000;
/** ... and also when the source moved this much (fraction) since the last push. */
export const DEVIATION_THRESHOLD = 0.025;
/** How often a publisher checks for a deviation between heartbeats. */
export const DEVIATION_CHECK_MS = 10_000;
const DAY_MS = 86_400_000;

/** One on-chain push: the price a publisher wrote for a feed and when. */
export interface Push {
  readonly publisher: string;
  readonly source: string;
  readonly pairId: string;
  readonly price: number;
  readonly pushMs: number;
  readonly txHash: string;
  readonly feedStream: number;
}

/** Price a publisher would push for a feed at `tMs`: its off-chain source's quote, or its own noisy view of the mid. */
function feedPrice(market: Market, pair: PairModel, feed: FeedDef, stream: number, tMs: number): number {
  const spec = {
    entryType: feed.dataType === "Perp" ? ("perp" as const) : ("spot" as const),
    expiryMs: null,
  };
  if (pair.def.sources.includes(feed.source)) {
    return sourcePriceAt(market, pair, feed.source, spec, sourceUpdateMs(market, pair, feed.source, tMs));
  }
  const bias = (uniform(market.seed, stream, 3) - 0.5) * 6e-4;
  return midPrice(market, pair, tMs) * (1 + bias + gaussian(market.seed, stream, tMs / 1000) * 1.5e-4);
}

/** Last push of a feed at or before `tMs` (heartbeat, or a later deviation push); null before genesis. */
export function lastPush(
  market: Market,
  network: Network,
  publisher: PublisherDef,
  feed: FeedDef,
  tMs: number,
): Push | null {
  const pair = market.pairs.get(feed.pairId);
  if (pair === undefined) return null;
  const stream = hashString(`${network}|${publisher.name}|${feed.pairId}|${feed.source}|${feed.dataType}`);
  const frozenSinceMs = market.faults.publisherFrozenSinceMs(publisher.name, network, tMs);
  const effectiveMs = frozenSinceMs === null ? tMs : Math.min(tMs, frozenSinceMs);
  const phaseMs = Math.floor(uniform(market.seed, stream, 7) * 60) * 1_000;
  const heartbeatMs = phaseMs + Math.floor((effectiveMs - phaseMs) / HEARTBEAT_MS) * HEARTBEAT_MS;
  if (heartbeatMs < market.genesisMs) return null;
  let pushMs = heartbeatMs;
  let price = feedPrice(market, pair, feed, stream, pushMs);
  for (
    let checkMs = heartbeatMs + DEVIATION_CHECK_MS;
    checkMs <= effectiveMs;
    checkMs += DEVIATION_CHECK_MS
  ) {
    const candidate = feedPrice(market, pair, feed, stream, checkMs);
    if (Math.abs(candidate / price - 1) >= DEVIATION_THRESHOLD) {
      price = candidate;
      pushMs = checkMs;
    }
  }
  const pushS = Math.floor(pushMs / 1000);
  return {
    publisher: publisher.name,
    source: feed.source,
    pairId: feed.pairId,
    price,
    pushMs,
    txHash: pseudoTxHash(market.seed, stream, pushS, hashString(network)),
    feedStream: stream,
  };
}

/** Feeds pushed on a network for a data type, with their publisher. */
export function feedsOn(
  market: Market,
  network: Network,
  dataType: "Spot" | "Perp",
): { readonly publisher: PublisherDef; readonly feed: FeedDef }[] {
  return market.publishers.flatMap((publisher) =>
    publisher.feeds
      .filter((feed) => feed.dataType === dataType && feed.networks.includes(network))
      .map((feed) => ({ publisher, feed })),
  );
}

/** Latest spot pushes of every publisher for a pair on a network, oldest first. */
export function pairPushes(market: Market, network: Network, pairId: string, tMs: number): Push[] {
  const pushes: Push[] = [];
  for (const { publisher, feed } of feedsOn(market, network, "Spot")) {
    if (feed.pairId !== pairId) continue;
    const push = lastPush(market, network, publisher, feed, tMs);
    if (push !== null) pushes.push(push);
  }
  return pushes.sort((a, b) => a.pushMs - b.pushMs || a.publisher.localeCompare(b.publisher));
}

/** Aggregated on-chain price (median of the latest pushes) of a directly pushed pair. */
export function onchainMedian(pushes: readonly Push[]): number {
  return median(pushes.map((push) => push.price));
}

/** Pushes of a feed during the 24 h before `tMs`: one per heartbeat plus a few deviation pushes. */
export function dailyUpdates(market: Market, push: Push | null, tMs: number): number {
  if (push === null) return 0;
  const windowStartMs = Math.max(tMs - DAY_MS, market.genesisMs);
  const heartbeats = Math.max(0, Math.floor((push.pushMs - windowStartMs) / HEARTBEAT_MS) + 1);
  return heartbeats + (heartbeats > 0 ? push.feedStream % 7 : 0);
}

/** Pushes of a feed since it was first listed (hundreds of days before the simulator started). */
export function totalUpdates(market: Market, push: Push | null): number {
  if (push === null) return 0;
  const listedMs = market.startMs - (200 + (push.feedStream % 600)) * DAY_MS;
  return Math.floor((push.pushMs - listedMs) / HEARTBEAT_MS) + (push.feedStream % 997);
}
