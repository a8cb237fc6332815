// Element readers for the `monitors.*` arrays: which pairs, networks, funding sources and vaults to poll.
import type {
  FundingMonitorConfig,
  OffchainMonitorConfig,
  OnchainMonitorConfig,
  PublishersMonitorConfig,
  VaultMonitorConfig,
} from "./types.js";
import { AGGREGATIONS, ENTRY_TYPES, INTERVALS, NETWORKS, PUBLISHER_TYPES } from "../domain/types.js";
import type { ElementReader } from "./element-reader.js";
import { readElements, reportDuplicates, type ReaderContext } from "./element-reader.js";
import { ID_PATTERN, normalisePair, PAIR_PATTERN } from "./checks.js";
import {
  expiryReason,
  onchainAggregationReason,
  unsupportedIntervalReason,
} from "../upstream/server-rules.js";

const DAY_MS = 86_400_000;
/** Any date or date-time: the exact form upstream accepts is checked by expiryReason, with its own message. */
const EXPIRY_SHAPE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

function pair(r: ElementReader, doc = "Pair to poll, LETTERS/LETTERS (upper-cased)."): string {
  return r.string("pair", {
    doc,
    pattern: PAIR_PATTERN,
    expected: "LETTERS/LETTERS",
    normalise: normalisePair,
  });
}

function periodMs(r: ElementReader, defaultMs: number): number {
  return r.int("periodMs", {
    doc: "Poll period in ms.",
    default: defaultMs,
    min: 100,
    max: DAY_MS,
  });
}

/** Read `monitors.offchain`: GET /node/v1/data per pair. */
export function readOffchainMonitors(
  raw: unknown,
  path: string,
  ctx: ReaderContext,
): OffchainMonitorConfig[] {
  const items = readElements(raw, path, ctx, (r) => {
    const item: OffchainMonitorConfig = {
      pair: pair(r),
      entryType: r.oneOf("entryType", ENTRY_TYPES, { doc: "Entry type.", default: "spot" }),
      aggregation: r.oneOf("aggregation", AGGREGATIONS, {
        doc: "Aggregation sent upstream. A twap target is polled without components (upstream fails twap with components), so component_deviation has no data for it.",
        default: "median",
      }),
      interval: r.oneOf("interval", INTERVALS, {
        doc: "Aggregation interval; live prices use 1s with median (upstream rejects 5min with median, and 100ms, 1s, 5s, 10s and 1w with twap).",
        default: "1s",
      }),
      expiry: r.nullableString("expiry", {
        doc: "Expiry of a future entry as YYYY-MM-DDTHH:MM:SS in UTC (the only form upstream accepts); only with entryType future.",
        pattern: EXPIRY_SHAPE,
        expected: "a date-time YYYY-MM-DDTHH:MM:SS or null",
      }),
      periodMs: periodMs(r, 1_000),
    };
    const intervalReason = unsupportedIntervalReason(item.aggregation, item.interval);
    if (intervalReason !== null) r.problem("interval", intervalReason);
    if (item.expiry !== null && item.entryType !== "future") {
      r.problem("expiry", "only applies to entryType future");
    }
    const expiryProblem = item.expiry === null ? null : expiryReason(item.expiry);
    if (expiryProblem !== null) r.problem("expiry", expiryProblem);
    return item;
  });
  reportDuplicates(items, path, ctx, (m) => JSON.stringify({ ...m, periodMs: 0 }), "");
  return items;
}

/** Read `monitors.onchain`: GET /node/v1/onchain per pair and network. */
export function readOnchainMonitors(raw: unknown, path: string, ctx: ReaderContext): OnchainMonitorConfig[] {
  const items = readElements(raw, path, ctx, (r) => {
    const item: OnchainMonitorConfig = {
      pair: pair(r),
      network: r.oneOf("network", NETWORKS, { doc: "Starknet network.", default: "starknet-mainnet" }),
      aggregation: r.oneOf("aggregation", AGGREGATIONS, {
        doc: "Aggregation sent upstream: median (the live server has no on-chain twap and fails it with 500, so twap is rejected).",
        default: "median",
      }),
      periodMs: periodMs(r, 10_000),
    };
    const reason = onchainAggregationReason(item.aggregation);
    if (reason !== null) r.problem("aggregation", reason);
    return item;
  });
  reportDuplicates(items, path, ctx, (m) => `${m.pair}|${m.network}|${m.aggregation}`, "");
  return items;
}

/** Read `monitors.publishers`: GET /node/v1/onchain/publishers per network and data type. */
export function readPublisherMonitors(
  raw: unknown,
  path: string,
  ctx: ReaderContext,
): PublishersMonitorConfig[] {
  const items = readElements(raw, path, ctx, (r) => ({
    network: r.oneOf("network", NETWORKS, { doc: "Starknet network.", default: "starknet-mainnet" }),
    publisherType: r.oneOf("publisherType", PUBLISHER_TYPES, {
      doc: "Publisher data type (`data_type`).",
      default: "Spot",
    }),
    periodMs: periodMs(r, 30_000),
  }));
  reportDuplicates(items, path, ctx, (m) => `${m.network}|${m.publisherType}`, "");
  return items;
}

/** Read `monitors.funding`: funding-rate history per pair and source. */
export function readFundingMonitors(raw: unknown, path: string, ctx: ReaderContext): FundingMonitorConfig[] {
  const items = readElements(raw, path, ctx, (r) => ({
    pair: pair(r),
    source: r.string("source", {
      doc: "Funding source, e.g. HYPERLIQUID, PARADEX, KRAKEN, EXTENDED, BYBIT (upper-cased).",
      pattern: /^[A-Za-z0-9_]+$/,
      expected: "a source name (letters, digits, _)",
      normalise: (s) => s.toUpperCase(),
    }),
    periodMs: periodMs(r, 60_000),
  }));
  reportDuplicates(items, path, ctx, (m) => `${m.pair}|${m.source}`, "");
  return items;
}

/** Read `monitors.vaults`: vault metadata per vault id. */
export function readVaultMonitors(raw: unknown, path: string, ctx: ReaderContext): VaultMonitorConfig[] {
  const items = readElements(raw, path, ctx, (r) => ({
    id: r.string("id", {
      doc: "Vault id, e.g. pragma-btc-vault.",
      pattern: ID_PATTERN,
      expected: "an id (letters, digits, _ - .)",
    }),
    periodMs: periodMs(r, 60_000),
  }));
  reportDuplicates(items, path, ctx, (m) => m.id, "");
  return items;
}
