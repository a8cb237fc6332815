// Subscription filters: which channels, pairs, rules and severities one WebSocket client receives.
import {
  ruleFilterMatches,
  SEVERITIES,
  severityRank,
  type AlertPayload,
  type BusEvent,
  type PriceTick,
  type Severity,
} from "../../domain/events.js";
import type { Channel, SubscribeMessage, UnsubscribeMessage } from "./protocol.js";

/** A client's filter; `pairs`/`rules` `null` = no restriction. */
export interface SubscriptionFilter {
  readonly channels: ReadonlySet<Channel>;
  readonly pairs: ReadonlySet<string> | null;
  readonly rules: ReadonlySet<string> | null;
  readonly minSeverity: Severity;
}

/** The filter of a client that has not subscribed yet: nothing is delivered, snapshots are unfiltered. */
export const EMPTY_FILTER: SubscriptionFilter = {
  channels: new Set(),
  pairs: null,
  rules: null,
  minSeverity: SEVERITIES[0],
};

/** The filter as replies show it: `pairs: []` / `rules: []` mean "all". */
export interface FilterView {
  readonly channels: readonly Channel[];
  readonly pairs: readonly string[];
  readonly rules: readonly string[];
  readonly minSeverity: Severity;
}

const toSet = (names: readonly string[]): ReadonlySet<string> | null =>
  names.length === 0 ? null : new Set(names);

/** Interned filters by content, held weakly: a filter goes once no client uses it. */
const interned = new Map<string, WeakRef<SubscriptionFilter>>();
const forget = new FinalizationRegistry<string>((key) => {
  if (interned.get(key)?.deref() === undefined) interned.delete(key);
});

/**
 * The one shared object for this filter's content, so clients with identical filters hold the same object
 * and the fan-out evaluates a filter once per event for all of them. Filters are never mutated.
 */
export function internFilter(filter: SubscriptionFilter): SubscriptionFilter {
  const sorted = (names: ReadonlySet<string> | null): string[] | null =>
    names === null ? null : [...names].sort();
  const key = JSON.stringify([
    sorted(filter.channels),
    sorted(filter.pairs),
    sorted(filter.rules),
    filter.minSeverity,
  ]);
  const existing = interned.get(key)?.deref();
  if (existing !== undefined) return existing;
  interned.set(key, new WeakRef(filter));
  forget.register(filter, key);
  return filter;
}

/** Subscribe adds channels; `pairs`, `rules` and `minSeverity` replace the current value when given. */
export function applySubscribe(filter: SubscriptionFilter, message: SubscribeMessage): SubscriptionFilter {
  return internFilter({
    channels: new Set([...filter.channels, ...message.channels]),
    pairs: message.pairs === undefined ? filter.pairs : toSet(message.pairs),
    rules: message.rules === undefined ? filter.rules : toSet(message.rules),
    minSeverity: message.minSeverity ?? filter.minSeverity,
  });
}

/**
 * Unsubscribe removes channels, and pairs or rules from a restricted filter. Removing names from an
 * unrestricted filter, or the last remaining one, is refused: the result would be ambiguous.
 */
export function applyUnsubscribe(
  filter: SubscriptionFilter,
  message: UnsubscribeMessage,
):
  | { readonly ok: true; readonly filter: SubscriptionFilter }
  | { readonly ok: false; readonly message: string } {
  const channels = new Set(filter.channels);
  for (const channel of message.channels) channels.delete(channel);
  const pairs = remove("pairs", filter.pairs, message.pairs);
  if (typeof pairs === "string") return { ok: false, message: pairs };
  const rules = remove("rules", filter.rules, message.rules);
  if (typeof rules === "string") return { ok: false, message: rules };
  return { ok: true, filter: internFilter({ channels, pairs, rules, minSeverity: filter.minSeverity }) };
}

function remove(
  field: "pairs" | "rules",
  current: ReadonlySet<string> | null,
  names: readonly string[] | undefined,
): ReadonlySet<string> | null | string {
  if (names === undefined || names.length === 0) return current;
  if (current === null) return `not filtering by ${field}: subscribe with "${field}" to narrow the filter`;
  const next = new Set(current);
  for (const name of names) next.delete(name);
  if (next.size === 0)
    return `removing every ${field} would match nothing: unsubscribe the channel, or subscribe with "${field}":[] for all`;
  return next;
}

/** Whether an alert passes the pair, rule and severity parts of the filter (channels aside). */
export function matchesAlert(filter: SubscriptionFilter, alert: AlertPayload): boolean {
  if (severityRank(alert.severity) < severityRank(filter.minSeverity)) return false;
  if (filter.rules !== null && !ruleFilterMatches(filter.rules, alert)) return false;
  if (filter.pairs === null) return true;
  const pair = alert.labels["pair"];
  return pair !== undefined && filter.pairs.has(pair);
}

/** Whether a price tick passes the pair part of the filter. */
export function matchesPrice(filter: SubscriptionFilter, tick: PriceTick): boolean {
  return filter.pairs === null || filter.pairs.has(tick.pair);
}

/** Whether a bus event is delivered to a client with this filter. */
export function matchesEvent(filter: SubscriptionFilter, event: BusEvent): boolean {
  switch (event.type) {
    case "alert":
      return filter.channels.has("alerts") && matchesAlert(filter, event.alert);
    case "price":
      return filter.channels.has("prices") && matchesPrice(filter, event.tick);
    case "lifecycle":
      return filter.channels.has("lifecycle");
  }
}

/** The filter in reply form, with stable ordering. */
export function viewFilter(filter: SubscriptionFilter): FilterView {
  return {
    channels: [...filter.channels].sort(),
    pairs: filter.pairs === null ? [] : [...filter.pairs].sort(),
    rules: filter.rules === null ? [] : [...filter.rules].sort(),
    minSeverity: filter.minSeverity,
  };
}
