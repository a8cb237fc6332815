// WebSocket sessions indexed by channel and pair, so an event visits only the sessions that can want it (DESIGN §7).
//
// Sessions are grouped by their filter (filters are interned: clients with the same filter share one object), and
// each filter is listed under every channel it subscribes to, by pair when it restricts pairs. An event looks up the
// filters of its channel that take any pair or its own pair, confirms each with the exact predicate
// (`matchesEvent`), and visits the sessions of the filters that match. With 1 000 alert-only clients a price tick
// looks at nothing; a tick of one pair looks only at the filters naming that pair. The index only prunes: the
// verdict is the exact predicate's, so what is delivered is what filtering every session delivered (the property
// test in test/sinks/ws/session-index.test.ts holds both paths to that).
import type { BusEvent } from "../../domain/events.js";
import { matchesEvent, type SubscriptionFilter } from "./filter.js";
import type { Channel } from "./protocol.js";

/** The live filters of one channel: those taking every pair, and those naming pairs (by pair). */
interface ChannelFilters {
  readonly anyPair: Set<SubscriptionFilter>;
  readonly byPair: Map<string, Set<SubscriptionFilter>>;
  /** Sessions whose filter has this channel. */
  sessions: number;
}

/** Sessions by filter, filters by channel and pair. */
export interface SessionIndex<S> {
  /** Record that `session`'s filter changed from `from` to `to` (`EMPTY_FILTER` for a new or a closed session). */
  move(session: S, from: SubscriptionFilter, to: SubscriptionFilter): void;
  /** Call `visit` once with each session whose filter matches `event`, and with no other session. */
  forEachMatching(event: BusEvent, visit: (session: S) => void): void;
  /** Sessions whose filter has `channel`. */
  sessionsOn(channel: Channel): number;
}

/** The channel an event travels on. */
const CHANNEL_OF: Readonly<Record<BusEvent["type"], Channel>> = {
  alert: "alerts",
  price: "prices",
  lifecycle: "lifecycle",
};

/** The pair an event is about, for the pair index (lifecycle events take no pair filter). */
function pairOf(event: BusEvent): string | undefined {
  switch (event.type) {
    case "alert":
      return event.alert.labels["pair"];
    case "price":
      return event.tick.pair;
    case "lifecycle":
      return undefined;
  }
}

/** An empty index; `matches` is the exact predicate (injectable so a test can count what is evaluated). */
export function createSessionIndex<S>(
  matches: (filter: SubscriptionFilter, event: BusEvent) => boolean = matchesEvent,
): SessionIndex<S> {
  return new Index<S>(matches);
}

/** Lifecycle events carry no pair: a lifecycle filter is listed for every pair whatever its `pairs`. */
function indexedPairs(filter: SubscriptionFilter, channel: Channel): ReadonlySet<string> | null {
  return channel === "lifecycle" ? null : filter.pairs;
}

class Index<S> implements SessionIndex<S> {
  private readonly groups = new Map<SubscriptionFilter, Set<S>>();
  private readonly channels = new Map<Channel, ChannelFilters>();

  constructor(private readonly matches: (filter: SubscriptionFilter, event: BusEvent) => boolean) {}

  move(session: S, from: SubscriptionFilter, to: SubscriptionFilter): void {
    if (from === to) return;
    this.leave(session, from);
    this.join(session, to);
  }

  forEachMatching(event: BusEvent, visit: (session: S) => void): void {
    const entry = this.channels.get(CHANNEL_OF[event.type]);
    if (entry === undefined || entry.sessions === 0) return;
    this.visitFilters(entry.anyPair, event, visit);
    const pair = pairOf(event);
    // an event without a pair matches only filters that take every pair
    if (pair !== undefined) this.visitFilters(entry.byPair.get(pair), event, visit);
  }

  sessionsOn(channel: Channel): number {
    return this.channels.get(channel)?.sessions ?? 0;
  }

  private visitFilters(
    filters: ReadonlySet<SubscriptionFilter> | undefined,
    event: BusEvent,
    visit: (session: S) => void,
  ): void {
    if (filters === undefined) return;
    for (const filter of filters) {
      if (!this.matches(filter, event)) continue;
      const group = this.groups.get(filter);
      if (group !== undefined) for (const session of group) visit(session);
    }
  }

  private channel(channel: Channel): ChannelFilters {
    let entry = this.channels.get(channel);
    if (entry === undefined) {
      entry = { anyPair: new Set(), byPair: new Map(), sessions: 0 };
      this.channels.set(channel, entry);
    }
    return entry;
  }

  private join(session: S, filter: SubscriptionFilter): void {
    // a filter with no channel is sent nothing: not listed
    if (filter.channels.size === 0) return;
    let group = this.groups.get(filter);
    if (group === undefined) {
      group = new Set();
      this.groups.set(filter, group);
      this.list(filter);
    }
    if (group.has(session)) return;
    group.add(session);
    for (const channel of filter.channels) this.channel(channel).sessions += 1;
  }

  private leave(session: S, filter: SubscriptionFilter): void {
    const group = this.groups.get(filter);
    if (group === undefined || !group.delete(session)) return;
    for (const channel of filter.channels) this.channel(channel).sessions -= 1;
    if (group.size > 0) return;
    this.groups.delete(filter);
    this.unlist(filter);
  }

  /** List a filter under each of its channels, by pair when it names pairs. */
  private list(filter: SubscriptionFilter): void {
    for (const channel of filter.channels) {
      const entry = this.channel(channel);
      const pairs = indexedPairs(filter, channel);
      if (pairs === null) entry.anyPair.add(filter);
      else
        for (const pair of pairs) {
          const set = entry.byPair.get(pair);
          if (set === undefined) entry.byPair.set(pair, new Set([filter]));
          else set.add(filter);
        }
    }
  }

  private unlist(filter: SubscriptionFilter): void {
    for (const channel of filter.channels) {
      const entry = this.channel(channel);
      const pairs = indexedPairs(filter, channel);
      if (pairs === null) entry.anyPair.delete(filter);
      else
        for (const pair of pairs) {
          const set = entry.byPair.get(pair);
          set?.delete(filter);
          if (set?.size === 0) entry.byPair.delete(pair);
        }
    }
  }
}
