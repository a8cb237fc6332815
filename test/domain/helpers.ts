// Builders for domain tests: rules with neutral lifecycle settings, targets, snapshots and observations.
import { PmError } from "../../src/domain/errors.js";
import type { AlertPayload } from "../../src/domain/events.js";
import {
  createMonitorState,
  observe,
  tick,
  type MonitorState,
  type Observation,
} from "../../src/domain/monitor.js";
import { parseDecimalPrice, type ScaledPrice } from "../../src/domain/price.js";
import type { RuleCommon, RuleConfig, RuleConfigKind } from "../../src/domain/rules/index.js";
import type { Silence, SilenceMatcher } from "../../src/domain/silence.js";
import type {
  FundingRate,
  OnchainEntrySet,
  OnchainPublisher,
  PairPrice,
  TargetSpec,
  Vault,
} from "../../src/domain/types.js";

export type RuleOf<K extends RuleConfigKind> = Extract<RuleConfig, { kind: K }>;
type Specific<K extends RuleConfigKind> = Omit<RuleOf<K>, keyof RuleCommon | "kind">;

/** A rule with no lifecycle delays; clearThreshold defaults to threshold. */
export function rule<K extends RuleConfigKind>(
  kind: K,
  specific: Specific<K>,
  common: Partial<RuleCommon> = {},
): RuleOf<K> {
  const threshold = common.threshold ?? 0;
  return {
    id: kind,
    enabled: true,
    severity: "warning",
    threshold,
    clearThreshold: common.clearThreshold ?? threshold,
    forMs: 0,
    minFiringMs: 0,
    repeatIntervalMs: 0,
    flapWindowMs: 0,
    flapMaxTransitions: 0,
    pairs: [],
    overrides: {},
    ...common,
    ...specific,
    kind,
  } as unknown as RuleOf<K>;
}

/** 18-decimal price from decimal text. */
export function p(text: string, decimals = 18): ScaledPrice {
  const price = parseDecimalPrice(text, decimals);
  if (price === null) throw new Error(`bad price ${text}`);
  return price;
}

export const T0 = Date.parse("2026-11-22T10:00:00.000Z");

export const BTC_OFF: Extract<TargetSpec, { kind: "offchain" }> = {
  kind: "offchain",
  id: "offchain:BTC/USD",
  pair: "BTC/USD",
  entryType: "spot",
  aggregation: "median",
  interval: "1s",
  expiry: null,
};
export const ETH_OFF: Extract<TargetSpec, { kind: "offchain" }> = {
  ...BTC_OFF,
  id: "offchain:ETH/USD",
  pair: "ETH/USD",
};
export const BTC_ON: Extract<TargetSpec, { kind: "onchain" }> = {
  kind: "onchain",
  id: "onchain:BTC/USD",
  pair: "BTC/USD",
  network: "starknet-mainnet",
  aggregation: "median",
};
export const PUBS: Extract<TargetSpec, { kind: "publishers" }> = {
  kind: "publishers",
  id: "publishers:mainnet",
  network: "starknet-mainnet",
  publisherType: "Spot",
};
export const FUND: Extract<TargetSpec, { kind: "funding" }> = {
  kind: "funding",
  id: "funding:BTC/USD",
  pair: "BTC/USD",
  source: "HYPERLIQUID",
};
export const VAULT: Extract<TargetSpec, { kind: "vault" }> = { kind: "vault", id: "vault:v1", vaultId: "v1" };

/** An off-chain pair price; components as [source, price] pairs. */
export function pairPrice(
  price: string,
  timestampMs: number,
  components: readonly (readonly [string, string])[] = [],
  numSources = components.length || 5,
): PairPrice {
  return {
    pairId: "BTC/USD",
    price: p(price),
    numSources,
    timestampMs,
    components: components.map(([source, value]) => ({ source, price: p(value), timestampMs })),
  };
}

/** An on-chain entry set with 8 decimals; entries as [publisher, price]. */
export function entrySet(
  price: string,
  lastUpdatedMs: number,
  entries: readonly (readonly [string, string])[] = [],
  extra: Partial<OnchainEntrySet> = {},
): OnchainEntrySet {
  return {
    pairId: "BTC/USD",
    price: p(price, 8),
    decimalsKnown: true,
    lastUpdatedMs,
    numSources: entries.length || 5,
    assetType: "Crypto",
    components: entries.map(([publisher, value]) => ({
      publisher,
      source: "BINANCE",
      price: p(value, 8),
      txHash: "0x1",
      timestampMs: lastUpdatedMs,
    })),
    variations: {},
    ...extra,
  };
}

/** A publisher with feeds as [pair, lastUpdatedMs]. */
export function publisher(
  name: string,
  lastUpdatedMs: number | null,
  feeds: readonly (readonly [string, number])[] = [],
): OnchainPublisher {
  return {
    publisher: name,
    websiteUrl: "",
    type: 0,
    nbFeeds: feeds.length,
    dailyUpdates: 1,
    totalUpdates: 1,
    lastUpdatedMs,
    feeds: feeds.map(([pairId, at]) => ({
      pairId,
      source: "BINANCE",
      price: p("1", 8),
      decimalsKnown: true,
      dailyUpdates: 1,
      lastUpdatedMs: at,
    })),
  };
}

/** A vault with the given status, paused flag and share price. */
export function vault(status: string, paused: boolean | null, sharePrice: string): Vault {
  return {
    id: "v1",
    name: "Vault One",
    description: "",
    inceptionDate: "",
    chain: "starknet",
    chainId: "1",
    symbol: "V1",
    baseAsset: "USDC",
    status,
    tvl: "1",
    sharePrice,
    mgmtFeeBps: 0,
    perfFeeBps: 0,
    strategyBrief: "",
    docsUrl: "",
    contract: { address: "0x", abiVersion: "1" },
    depositConstraints: { minDeposit: "0", maxDeposit: "0", paused },
    withdrawConstraints: {
      instantLiquidity: true,
      instantSlippageMaxBps: 0,
      redeem24hThresholdPctOfAum: 0,
      redeem48hAboveThreshold: false,
    },
    icons: { light: "", dark: "" },
  };
}

export const fundingRates = (hourlyRate: number, timestampMs: number): readonly FundingRate[] => [
  { pair: "BTC/USD", source: "HYPERLIQUID", timestampMs: timestampMs - 1000, hourlyRate: 0 },
  { pair: "BTC/USD", source: "HYPERLIQUID", timestampMs, hourlyRate },
];

/** An upstream answer with HTTP status 500. */
export const http500 = new PmError("PM_ERR_UPSTREAM_HTTP", "HTTP 500", {
  retryable: true,
  details: { status: 500 },
});
/** An upstream that refuses the connection (the errno in the cause chain). */
export const refused = new PmError("PM_ERR_UPSTREAM_NETWORK", "connect failed", {
  retryable: true,
  cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }),
});

export const failure = (message = "boom"): PmError =>
  new PmError("PM_ERR_UPSTREAM_HTTP", message, { retryable: true });

/** Observation builders. */
export const obs = {
  off: (value: PairPrice, observedAtMs: number, target = BTC_OFF): Observation => ({
    kind: "offchain",
    target,
    result: { ok: true, value },
    observedAtMs,
  }),
  offFail: (observedAtMs: number, target = BTC_OFF, message = "boom"): Observation => ({
    kind: "offchain",
    target,
    result: { ok: false, error: failure(message) },
    observedAtMs,
  }),
  on: (value: OnchainEntrySet, observedAtMs: number): Observation => ({
    kind: "onchain",
    target: BTC_ON,
    result: { ok: true, value },
    observedAtMs,
  }),
  pubs: (value: readonly OnchainPublisher[], observedAtMs: number): Observation => ({
    kind: "publishers",
    target: PUBS,
    result: { ok: true, value },
    observedAtMs,
  }),
  funding: (value: readonly FundingRate[], observedAtMs: number): Observation => ({
    kind: "funding",
    target: FUND,
    result: { ok: true, value },
    observedAtMs,
  }),
  vault: (value: Vault, observedAtMs: number): Observation => ({
    kind: "vault",
    target: VAULT,
    result: { ok: true, value },
    observedAtMs,
  }),
};

/** Drive a timeline of [offsetMs from T0, BTC/USD sources | "fail" | "tick"] and collect "rule:reason@offset" strings. */
export function timeline(
  rules: readonly RuleConfig[],
  steps: readonly (readonly [number, number | "fail" | "tick"])[],
  start: MonitorState = createMonitorState(),
): { log: string[]; state: MonitorState; transitions: AlertPayload[] } {
  let state = start;
  const log: string[] = [];
  const transitions: AlertPayload[] = [];
  for (const [offset, what] of steps) {
    const at = T0 + offset;
    const e =
      what === "tick"
        ? tick(state, rules, at)
        : what === "fail"
          ? observe(state, obs.offFail(at), rules, at)
          : observe(state, obs.off(pairPrice("100", at, [], what), at), rules, at);
    state = e.state;
    for (const t of e.transitions) {
      log.push(`${t.rule}:${t.reason}@${offset}`);
      transitions.push(t);
    }
  }
  return { log, state, transitions };
}

/** ISO text of an epoch time, as silences and alerts carry times. */
export const iso = (ms: number): string => new Date(ms).toISOString();

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;

/** A matcher written with its amtool operator, built without the parser under test. */
export function matcher(name: string, operator: "=" | "!=" | "=~" | "!~", value: string): SilenceMatcher {
  return { name, value, isRegex: operator.endsWith("~"), isEqual: !operator.startsWith("!") };
}

/** A stored silence over [startsAtMs, endsAtMs); one `pair="BTC/USD"` matcher unless told. */
export function silence(
  id: string,
  startsAtMs: number,
  endsAtMs: number,
  matchers: readonly SilenceMatcher[] = [matcher("pair", "=", "BTC/USD")],
): Silence {
  return {
    id,
    matchers,
    startsAt: iso(startsAtMs),
    endsAt: iso(endsAtMs),
    createdBy: "ops",
    comment: `test silence ${id}`,
    updatedAt: iso(Math.min(startsAtMs, T0)),
  };
}
