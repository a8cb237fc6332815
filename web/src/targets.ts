// Target rows: which alerts concern a target, the state it is in, its latest value and age (pure).
import { formatPercent, formatPrice } from "./format.js";
import type { SeriesPoint } from "./sparkline.js";
import type { PageState, Series } from "./store.js";
import type { AlertPayload, TargetView } from "./types.js";

/** A target's state, most urgent first in TARGET_STATES. */
export type TargetState = "upstream_error" | "firing" | "silenced" | "stale" | "pending" | "ok";
/** The states, most urgent first (the order targetState checks them). */
export const TARGET_STATES: readonly TargetState[] = [
  "upstream_error",
  "firing",
  "silenced",
  "stale",
  "pending",
  "ok",
];

/** One row of the targets table. */
export interface TargetRow {
  readonly id: string;
  /** What it is, e.g. "BTC/USD", "vault 0x12…", "publishers on sepolia". */
  readonly title: string;
  /** How it is polled, e.g. "offchain · spot · median · 1min". */
  readonly detail: string;
  readonly state: TargetState;
  readonly value: string;
  /** Time of the data on the daemon's clock (ms), for the ticking age; null without data. */
  readonly dataAtMs: number | null;
  readonly points: readonly SeriesPoint[];
  readonly alerts: readonly AlertPayload[];
  /** Why the latest poll failed, when it did. */
  readonly problem: string | null;
}

/** Labels that say where data comes from: an alert and a target that both carry one must agree on it. */
const IDENTITY_LABELS = ["pair", "market", "network", "vault"] as const;
/** Labels compared only when both carry them (publisher targets say entry_type, sources belong to some alerts only). */
const SHARED_LABELS = ["entry_type", "source"] as const;

/**
 * Whether `alert` concerns `target`: an upstream_error names its target (`endpoint`); any other alert concerns
 * every target whose identity labels (pair, market, network, vault) it shares exactly, e.g. a BTC/USD spot
 * price_change concerns each off-chain BTC/USD spot target, whatever its aggregation or interval.
 */
export function alertConcernsTarget(
  alert: Pick<AlertPayload, "labels">,
  target: Pick<TargetView, "id" | "labels">,
): boolean {
  const endpoint = alert.labels["endpoint"];
  if (endpoint !== undefined) return endpoint === target.id;
  let shared = 0;
  for (const name of IDENTITY_LABELS) {
    const a = alert.labels[name];
    const t = target.labels[name];
    if (a === undefined && t === undefined) continue;
    if (a !== t) return false;
    shared += 1;
  }
  if (shared === 0) return false;
  return SHARED_LABELS.every((name) => {
    const a = alert.labels[name];
    const t = target.labels[name];
    return a === undefined || t === undefined || a === t;
  });
}

const isSilenced = (alert: AlertPayload): boolean => (alert.silencedBy?.length ?? 0) > 0;

/** How long without a tick a target that ticks is stale: three periods and a little slack. */
export function staleAfterMs(periodMs: number): number {
  return 3 * periodMs + 2_000;
}

/**
 * The state of a target, most urgent first: an upstream failure (its upstream_error firing, or its latest poll
 * failed and nothing came since), firing (an alert not silenced; a stale_price alert reads as stale), silenced
 * (every firing alert silenced), stale (stale_price firing, or no tick for three periods), pending (never polled
 * yet), else ok.
 */
export function targetState(input: {
  readonly alerts: readonly AlertPayload[];
  readonly lastPollFailed: boolean;
  readonly polled: boolean;
  readonly ticking: boolean;
  readonly sinceTickMs: number | null;
  readonly periodMs: number | null;
}): TargetState {
  const { alerts } = input;
  if (alerts.some((a) => a.rule === "upstream_error") || (input.lastPollFailed && !input.ticking))
    return "upstream_error";
  const loud = alerts.filter((a) => !isSilenced(a));
  if (loud.some((a) => a.rule !== "stale_price")) return "firing";
  if (alerts.length > 0 && loud.length === 0) return "silenced";
  const noTicks =
    input.sinceTickMs !== null && input.periodMs !== null && input.sinceTickMs > staleAfterMs(input.periodMs);
  if (loud.length > 0 || noTicks) return "stale";
  if (!input.polled) return "pending";
  return "ok";
}

/** A target's name and how it is polled, from its labels. */
function describe(target: Pick<TargetView, "id" | "kind" | "labels">): { title: string; detail: string } {
  const l = target.labels;
  const parts = (names: readonly string[]): string =>
    [target.kind, ...names.map((name) => l[name]).filter((v): v is string => v !== undefined)].join(" · ");
  switch (target.kind) {
    case "offchain":
      return {
        title: l["pair"] ?? target.id,
        detail: parts(["entry_type", "aggregation", "interval", "expiry"]),
      };
    case "onchain":
      return { title: l["pair"] ?? target.id, detail: parts(["network", "aggregation"]) };
    case "publishers":
      return { title: `publishers on ${l["network"] ?? "?"}`, detail: parts(["publisher_type"]) };
    case "funding":
      return { title: l["pair"] ?? target.id, detail: parts(["source"]) };
    case "vault":
      return { title: `vault ${l["vault"] ?? target.id}`, detail: target.kind };
    default:
      return { title: target.id, detail: target.kind };
  }
}

/** The latest value as text: a live tick wins over the value read at load. */
function valueText(target: TargetView | null, series: Series | undefined): string {
  if (series?.latest != null) return formatPrice(series.latest.price);
  const latest = target?.latest ?? null;
  if (latest === null) return "–";
  switch (latest.kind) {
    case "price":
      return formatPrice(latest.price);
    case "publishers":
      return `${latest.publishers} publishers · ${latest.feeds} feeds`;
    case "funding":
      return `${formatPercent(latest.hourlyRate)}/h`;
    case "vault":
      return `${latest.status} · share ${latest.sharePrice}`;
  }
}

/** The time of a target's data (daemon's clock): the latest tick's timestamp, else the age read at load. */
function dataAtMs(
  target: TargetView | null,
  series: Series | undefined,
  readAtMs: number | null,
): number | null {
  const tickMs = series?.latest == null ? NaN : Date.parse(series.latest.timestamp);
  if (Number.isFinite(tickMs)) return tickMs;
  if (target?.ageMs == null || readAtMs === null) return null;
  return readAtMs - target.ageMs;
}

/** A target known only from its ticks (the targets read failed or has not answered yet). */
function targetFromTick(series: Series, id: string): TargetView {
  const tick = series.latest;
  const labels: Record<string, string> = tick === null ? {} : { pair: tick.pair, market: tick.market };
  if (tick?.entryType !== undefined) labels["entry_type"] = tick.entryType;
  if (tick?.network !== undefined) labels["network"] = tick.network;
  const kind = tick?.market ?? "offchain";
  return { id, kind, labels, periodMs: 0, lastPoll: null, ageMs: null, latest: null, history: [] };
}

/** One row of a target, at `nowMs` on the daemon's clock; `readAtMs` is when the targets were read (same clock). */
export function targetRow(
  target: TargetView,
  series: Series | undefined,
  alerts: readonly AlertPayload[],
  nowMs: number,
  readAtMs: number | null,
): TargetRow {
  const concerned = alerts.filter((alert) => alertConcernsTarget(alert, target));
  const readMs = readAtMs ?? -Infinity;
  const ticking = series?.observedAtMs != null && series.observedAtMs > readMs;
  const lastPoll = target.lastPoll;
  const state = targetState({
    alerts: concerned,
    lastPollFailed: lastPoll !== null && !lastPoll.ok,
    polled: lastPoll !== null || series?.latest != null,
    ticking,
    sinceTickMs: series?.observedAtMs == null ? null : nowMs - series.observedAtMs,
    periodMs: target.periodMs > 0 ? target.periodMs : null,
  });
  return {
    id: target.id,
    ...describe(target),
    state,
    value: valueText(target, series),
    dataAtMs: dataAtMs(target, series, readAtMs),
    points: series?.points ?? [],
    alerts: concerned,
    problem:
      lastPoll !== null && !lastPoll.ok && !ticking ? (lastPoll.error?.message ?? "poll failed") : null,
  };
}

/**
 * Every target's row at `nowMs` (daemon's clock), sorted by id: those the API lists or, until it has answered (or
 * when it cannot), those known from their ticks.
 */
export function targetRows(state: PageState, nowMs: number): TargetRow[] {
  const alerts = [...state.alerts.values()];
  const targets =
    state.targets !== null
      ? [...state.targets]
      : [...state.series].map(([id, series]) => targetFromTick(series, id));
  return targets
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((target) => targetRow(target, state.series.get(target.id), alerts, nowMs, state.targetsReadAtMs));
}
