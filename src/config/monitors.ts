// The `monitors.*` array elements (which pairs, networks, funding sources and vaults to poll): schemas and types.
import type { z } from "zod";
import { AGGREGATIONS, ENTRY_TYPES, INTERVALS, NETWORKS, PUBLISHER_TYPES } from "../domain/types.js";
import {
  TRANSPORTS,
  expiryReason,
  onchainAggregationReason,
  unsupportedIntervalReason,
} from "../upstream/server-rules.js";
import { ID_PATTERN, normalisePair, PAIR_PATTERN } from "./checks.js";
import { parseArray, parseAt, reportDuplicates } from "./elements.js";
import type { ConfigProblem } from "./problems.js";
import { element, int, nullableOneOf, nullableText, oneOf, text } from "./fields.js";

const DAY_MS = 86_400_000;
/** Any date or date-time: the exact form upstream accepts is checked by expiryReason, with its own message. */
const EXPIRY_SHAPE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

const pair = () =>
  text({
    doc: "Pair to poll, LETTERS/LETTERS (upper-cased).",
    pattern: PAIR_PATTERN,
    expected: "LETTERS/LETTERS",
    normalise: normalisePair,
  });
const periodMs = (defaultMs: number) =>
  int({ doc: "Poll period in ms.", default: defaultMs, min: 100, max: DAY_MS });
const network = () => oneOf(NETWORKS, { doc: "Starknet network.", default: "starknet-mainnet" });

const offchainShape = {
  pair: pair(),
  entryType: oneOf(ENTRY_TYPES, { doc: "Entry type.", default: "spot" }),
  aggregation: oneOf(AGGREGATIONS, {
    doc: "Aggregation sent upstream. A twap target is polled without components (upstream fails twap with components), so component_deviation has no data for it.",
    default: "median",
  }),
  interval: oneOf(INTERVALS, {
    doc: "Aggregation interval; live prices use 1s with median (upstream rejects 5min with median, and 100ms, 1s, 5s, 10s and 1w with twap).",
    default: "1s",
  }),
  expiry: nullableText({
    doc: "Expiry of a future entry as YYYY-MM-DDTHH:MM:SS in UTC (the only form upstream accepts); only with entryType future.",
    pattern: EXPIRY_SHAPE,
    expected: "a date-time YYYY-MM-DDTHH:MM:SS or null",
  }),
  periodMs: periodMs(1_000),
  transport: nullableOneOf(TRANSPORTS, {
    doc: "How this pair's prices arrive: poll (GET /data every periodMs) or stream (the SSE connection of its interval; spot median only, other entries poll and check-config says why); null: upstream.transport.",
  }),
};

/** `monitors.offchain[]`: GET /node/v1/data per pair, with the combinations upstream refuses rejected. */
const offchain = element(offchainShape).superRefine((m, ctx) => {
  const intervalReason = unsupportedIntervalReason(m.aggregation, m.interval);
  if (intervalReason !== null) ctx.addIssue({ code: "custom", path: ["interval"], message: intervalReason });
  if (m.expiry === null) return;
  if (m.entryType !== "future")
    ctx.addIssue({ code: "custom", path: ["expiry"], message: "only applies to entryType future" });
  const reason = expiryReason(m.expiry);
  if (reason !== null) ctx.addIssue({ code: "custom", path: ["expiry"], message: reason });
});

const onchainShape = {
  pair: pair(),
  network: network(),
  aggregation: oneOf(AGGREGATIONS, {
    doc: "Aggregation sent upstream: median (the live server has no on-chain twap and fails it with 500, so twap is rejected).",
    default: "median",
  }),
  periodMs: periodMs(10_000),
};

/** `monitors.onchain[]`: GET /node/v1/onchain per pair and network. */
const onchain = element(onchainShape).superRefine((m, ctx) => {
  const reason = onchainAggregationReason(m.aggregation);
  if (reason !== null) ctx.addIssue({ code: "custom", path: ["aggregation"], message: reason });
});

const publishersShape = {
  network: network(),
  publisherType: oneOf(PUBLISHER_TYPES, { doc: "Publisher data type (`data_type`).", default: "Spot" }),
  periodMs: periodMs(30_000),
};

const fundingShape = {
  pair: pair(),
  source: text({
    doc: "Funding source, e.g. HYPERLIQUID, PARADEX, KRAKEN, EXTENDED, BYBIT (upper-cased).",
    pattern: /^[A-Za-z0-9_]+$/,
    expected: "a source name (letters, digits, _)",
    normalise: (s) => s.toUpperCase(),
  }),
  periodMs: periodMs(60_000),
};

const vaultsShape = {
  id: text({
    doc: "Vault id, e.g. pragma-btc-vault.",
    pattern: ID_PATTERN,
    expected: "an id (letters, digits, _ - .)",
  }),
  periodMs: periodMs(60_000),
};

/** One monitors array: its element schema, its keys (for the docs) and what makes two elements the same target. */
export interface MonitorArray<T> {
  readonly shape: z.ZodRawShape;
  readonly schema: z.ZodType<T>;
  readonly identity: (m: T) => string;
}

const monitor = <T>(
  shape: z.ZodRawShape,
  schema: z.ZodType<T>,
  identity: (m: T) => string,
): MonitorArray<T> => ({
  shape,
  schema,
  identity,
});

/** Every `monitors.*` array, in documentation order. */
export const MONITOR_ARRAYS = {
  offchain: monitor(offchainShape, offchain, (m) => JSON.stringify({ ...m, periodMs: 0, transport: null })),
  onchain: monitor(onchainShape, onchain, (m) => `${m.pair}|${m.network}|${m.aggregation}`),
  publishers: monitor(publishersShape, element(publishersShape), (m) => `${m.network}|${m.publisherType}`),
  funding: monitor(fundingShape, element(fundingShape), (m) => `${m.pair}|${m.source}`),
  vaults: monitor(vaultsShape, element(vaultsShape), (m) => m.id),
};

type MonitorArrays = typeof MONITOR_ARRAYS;
type ElementOf<N extends keyof MonitorArrays> = MonitorArrays[N] extends MonitorArray<infer T> ? T : never;

export type OffchainMonitorConfig = Readonly<ElementOf<"offchain">>;
export type OnchainMonitorConfig = Readonly<ElementOf<"onchain">>;
export type PublishersMonitorConfig = Readonly<ElementOf<"publishers">>;
export type FundingMonitorConfig = Readonly<ElementOf<"funding">>;
export type VaultMonitorConfig = Readonly<ElementOf<"vaults">>;

/** Read one `monitors.*` array (raw JSON from the merged layers): valid elements; problems for the rest. */
export function readMonitors<T>(
  path: string,
  array: MonitorArray<T>,
  raw: unknown,
  problems: ConfigProblem[],
): T[] {
  const items = parseArray(raw, path, problems, (item, key) => parseAt(array.schema, item, key, problems));
  return reportDuplicates(items, path, problems, array.identity);
}
