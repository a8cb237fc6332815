// What one WebSocket connection has been sent, kept as (seq range, filter) records, and the `since` replay it implies (pure).
//
// The contract (DESIGN §4, issue 15 §3): after any sequence of subscribe/unsubscribe/filter changes on one
// connection, a subscribe with `since` delivers every journaled event after `since` that matches the new
// filter and that this connection has not been sent, exactly once, in seq order, then live.
//
// Storing the seqs sent would grow with traffic. Instead the record says *why* an event was sent: live
// delivery under filter F from seq a to seq b sends exactly the events of (a, b] that match F, and a replay
// under F' from `since` to b sends (with what was already sent) every event of (since, b] matching F'. So
// "was event e sent?" = "does some range containing e.seq have a filter matching e?", exactly, and the record
// grows with filter changes, not with events. It is compacted on every change:
// - ranges wholly older than the journal are dropped (their events can never be replayed again);
// - ranges with the same filter that touch are merged; a range inside another whose filter matches a superset
//   is dropped; ranges whose filter has no journaled channel are dropped (they sent nothing);
// - beyond `maxRanges` the ranges ending earliest are forgotten and `floorSeq` rises to their end: the record
//   stays exact above the floor, and a `since` below it is refused rather than answered with duplicates.
import type { JournaledEvent } from "../../domain/events.js";
import { severityRank } from "../../domain/events.js";
import { EMPTY_FILTER, matchesEvent, type SubscriptionFilter } from "./filter.js";

/** Ranges one connection may hold before its oldest are forgotten (a few KB per connection at most). */
export const MAX_SENT_RANGES = 64;

/** Every journaled event with `fromSeq < seq <= toSeq` matching `filter` was sent on this connection. */
export interface SentRange {
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly filter: SubscriptionFilter;
}

/** One connection's delivery state: its live filter and the record of what it was sent. */
export interface DeliveryState {
  /** The filter live events are delivered under. */
  readonly filter: SubscriptionFilter;
  /** Every journaled event after this seq matching `filter` is (being) sent live. */
  readonly liveFromSeq: number;
  /** Closed ranges of earlier filters and replays, compacted. */
  readonly ranges: readonly SentRange[];
  /** The record is exact for seqs above this; a `since` below it cannot be answered exactly. */
  readonly floorSeq: number;
}

/** The journal as the planner sees it at one instant. */
export interface JournalView {
  /** Seq of the last journaled event. */
  readonly lastSeq: number;
  /** Seq of the oldest event the journal still holds (`lastSeq + 1` when empty). */
  readonly oldestSeq: number;
}

/** The state of a connection that has not subscribed yet (it has been sent nothing). */
export function initialDelivery(lastSeq: number): DeliveryState {
  return { filter: EMPTY_FILTER, liveFromSeq: lastSeq, ranges: [], floorSeq: 0 };
}

/** Whether this connection was sent `event` (for events up to the journal's last seq at the time of asking). */
export function wasSent(state: DeliveryState, event: JournaledEvent): boolean {
  if (event.seq > state.liveFromSeq && matchesEvent(state.filter, event)) return true;
  return state.ranges.some(
    (range) => event.seq > range.fromSeq && event.seq <= range.toSeq && matchesEvent(range.filter, event),
  );
}

/** The outcome of a state change; `forgotten` counts ranges dropped by the `maxRanges` limit. */
export interface DeliveryChange {
  readonly state: DeliveryState;
  readonly forgotten: number;
}

/** Switch the live filter at the journal's current seq (subscribe without `since`, unsubscribe). */
export function changeFilter(
  state: DeliveryState,
  filter: SubscriptionFilter,
  journal: JournalView,
  maxRanges = MAX_SENT_RANGES,
): DeliveryChange {
  if (filter === state.filter) return { state, forgotten: 0 };
  const closed = { fromSeq: state.liveFromSeq, toSeq: journal.lastSeq, filter: state.filter };
  return compact({ ...state, filter, liveFromSeq: journal.lastSeq }, [closed], journal, maxRanges);
}

/** What a subscribe with `since` sends: a gap (journal too short), the events to replay, and the next state. */
export type ReplayPlan =
  | {
      readonly ok: true;
      readonly gap: { readonly from: number; readonly to: number } | null;
      readonly events: readonly JournaledEvent[];
      readonly state: DeliveryState;
      readonly forgotten: number;
    }
  | { readonly ok: false; readonly floorSeq: number };

/**
 * Plan a subscribe with `since` under `filter`: every event of `replay` (the journal after `since`) up to the
 * last seq that matches `filter` and was not sent yet, in seq order; live continues after the last seq.
 */
export function planReplay(
  state: DeliveryState,
  options: {
    readonly filter: SubscriptionFilter;
    readonly since: number;
    readonly journal: JournalView;
    readonly replay: {
      readonly gap: { readonly from: number; readonly to: number } | null;
      readonly events: readonly JournaledEvent[];
    };
    readonly maxRanges?: number;
  },
): ReplayPlan {
  const { filter, since, journal, replay } = options;
  if (since < state.floorSeq) return { ok: false, floorSeq: state.floorSeq };
  // only ranges reaching past `since` can have sent a replayed event
  const relevant = { ...state, ranges: state.ranges.filter((range) => range.toSeq > since) };
  const events = replay.events.filter(
    (event) => event.seq <= journal.lastSeq && matchesEvent(filter, event) && !wasSent(relevant, event),
  );
  const closed: SentRange[] = [
    { fromSeq: state.liveFromSeq, toSeq: journal.lastSeq, filter: state.filter },
    // with what was sent before, every event of (since, last] matching the new filter has now been sent
    { fromSeq: since, toSeq: journal.lastSeq, filter },
  ];
  const next = { ...state, filter, liveFromSeq: journal.lastSeq };
  const { state: compacted, forgotten } = compact(
    next,
    closed,
    journal,
    options.maxRanges ?? MAX_SENT_RANGES,
  );
  return { ok: true, gap: replay.gap, events, state: compacted, forgotten };
}

/**
 * Add `added` to the record and compact it (see the module comment). The kept ranges are already compact, so
 * only the added ones are compared with the rest: O(ranges) per change, whatever the history.
 */
function compact(
  state: DeliveryState,
  added: readonly SentRange[],
  journal: JournalView,
  maxRanges: number,
): DeliveryChange {
  // a range below the oldest held event can only ever speak of events no replay can return
  const floorOfJournal = journal.oldestSeq - 1;
  const clip = (range: SentRange): SentRange =>
    range.fromSeq >= floorOfJournal ? range : { ...range, fromSeq: floorOfJournal };
  const useful = (range: SentRange): boolean => range.toSeq > range.fromSeq && sendsJournaled(range.filter);
  let ranges = state.ranges.map(clip).filter(useful);
  for (const fresh of added.map(clip).filter(useful)) {
    let range = fresh;
    // merge with the ranges of the same filter it overlaps or touches
    const overlapping = (kept: SentRange): boolean =>
      kept.filter === range.filter && kept.fromSeq <= range.toSeq && range.fromSeq <= kept.toSeq;
    for (let kept = ranges.find(overlapping); kept !== undefined; kept = ranges.find(overlapping)) {
      const other = kept;
      range = {
        fromSeq: Math.min(other.fromSeq, range.fromSeq),
        toSeq: Math.max(other.toSeq, range.toSeq),
        filter: range.filter,
      };
      ranges = ranges.filter((candidate) => candidate !== other);
    }
    const current = range;
    if (ranges.some((kept) => covered(current, kept))) continue;
    ranges = ranges.filter((kept) => !covered(kept, current));
    ranges.push(current);
  }
  // a range of the live filter reaching the live start extends live delivery backwards
  let liveFromSeq = state.liveFromSeq;
  const joining = ranges.find(
    (range) => range.filter === state.filter && range.fromSeq < liveFromSeq && range.toSeq >= liveFromSeq,
  );
  if (joining !== undefined) liveFromSeq = joining.fromSeq;
  const live = { fromSeq: liveFromSeq, toSeq: Number.POSITIVE_INFINITY, filter: state.filter };
  ranges = ranges.filter((range) => !covered(range, live));
  let floorSeq = state.floorSeq;
  let forgotten = 0;
  while (ranges.length > maxRanges) {
    // forget the range ending earliest; the record stays exact above its end
    const earliest = ranges.reduce((a, b) => (b.toSeq < a.toSeq ? b : a));
    floorSeq = Math.max(floorSeq, earliest.toSeq);
    ranges = ranges.filter((range) => range !== earliest);
    forgotten += 1;
  }
  return { state: { ...state, liveFromSeq, ranges, floorSeq }, forgotten };
}

/** Whether `inner` says nothing `outer` does not: its seqs lie within and its filter matches no more. */
function covered(inner: SentRange, outer: SentRange): boolean {
  return (
    outer.fromSeq <= inner.fromSeq && inner.toSeq <= outer.toSeq && filterWithin(inner.filter, outer.filter)
  );
}

/** Whether every journaled event `inner` matches is matched by `outer` (conservative: set inclusion). */
export function filterWithin(inner: SubscriptionFilter, outer: SubscriptionFilter): boolean {
  if (inner.channels.has("lifecycle") && !outer.channels.has("lifecycle")) return false;
  if (!inner.channels.has("alerts")) return true;
  if (!outer.channels.has("alerts")) return false;
  return (
    severityRank(outer.minSeverity) <= severityRank(inner.minSeverity) &&
    namesWithin(inner.pairs, outer.pairs) &&
    namesWithin(inner.rules, outer.rules)
  );
}

function namesWithin(inner: ReadonlySet<string> | null, outer: ReadonlySet<string> | null): boolean {
  if (outer === null) return true;
  if (inner === null || inner.size > outer.size) return false;
  for (const name of inner) if (!outer.has(name)) return false;
  return true;
}

/** Whether a filter delivers any journaled event (prices are not journaled). */
const sendsJournaled = (filter: SubscriptionFilter): boolean =>
  filter.channels.has("alerts") || filter.channels.has("lifecycle");
