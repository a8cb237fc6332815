// Bounded ring of recent journaled events, numbered by a strictly increasing `seq` for replay.
import type { JournaledEvent } from "../domain/events.js";

/** Distributes an event type over a union so `seq` can be omitted from each member. */
type WithoutSeq<T> = T extends unknown ? Omit<T, "seq"> : never;
export type UnnumberedEvent = WithoutSeq<JournaledEvent>;

/** Result of a replay request: the events after `since`, and a gap when some were already dropped. */
export interface Replay {
  readonly gap: { readonly from: number; readonly to: number } | null;
  readonly events: readonly JournaledEvent[];
}

/** The journal: append numbers an event; `after` replays; capacity bounds memory. */
export interface Journal {
  append(event: UnnumberedEvent): JournaledEvent;
  /** Hold an event numbered elsewhere (the cluster's log); its seq must be above `lastSeq`. */
  insert(event: JournaledEvent): void;
  after(since: number): Replay;
  readonly lastSeq: number;
  /** Seq of the oldest event held (`lastSeq + 1` when empty). */
  readonly oldestSeq: number;
  readonly size: number;
  readonly capacity: number;
  /** Every held event, oldest first (for persistence). */
  entries(): readonly JournaledEvent[];
}

/** Create a journal holding at most `capacity` events; `initial` restores a persisted tail. */
export function createJournal(
  capacity: number,
  initial: readonly JournaledEvent[] = [],
  lastSeq = 0,
): Journal {
  if (!Number.isInteger(capacity) || capacity < 1)
    throw new RangeError(`journal capacity must be ≥ 1, got ${capacity}`);
  const ring: (JournaledEvent | undefined)[] = new Array<JournaledEvent | undefined>(capacity);
  let head = 0; // index of the oldest event
  let size = 0;
  let seq = lastSeq;

  const push = (event: JournaledEvent): void => {
    ring[(head + size) % capacity] = event;
    if (size < capacity) size++;
    else head = (head + 1) % capacity;
  };
  for (const event of initial.slice(-capacity)) {
    push(event);
    seq = Math.max(seq, event.seq);
  }
  const at = (i: number): JournaledEvent => ring[(head + i) % capacity] as JournaledEvent;

  return {
    append(event) {
      seq += 1;
      const numbered = { ...event, seq } as JournaledEvent;
      push(numbered);
      return numbered;
    },
    insert(event) {
      if (event.seq <= seq) throw new RangeError(`seq ${event.seq} is not above the last seq ${seq}`);
      seq = event.seq;
      push(event);
    },
    after(since) {
      if (size === 0) {
        return { gap: since < seq ? { from: since + 1, to: seq } : null, events: [] };
      }
      const oldest = at(0).seq;
      const gap = since + 1 < oldest ? { from: since + 1, to: oldest - 1 } : null;
      // seqs are strictly increasing: binary search for the first event with seq > since
      let lo = 0;
      let hi = size;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (at(mid).seq > since) hi = mid;
        else lo = mid + 1;
      }
      const events: JournaledEvent[] = [];
      for (let i = lo; i < size; i++) events.push(at(i));
      return { gap, events };
    },
    get lastSeq() {
      return seq;
    },
    get oldestSeq() {
      return size === 0 ? seq + 1 : at(0).seq;
    },
    get size() {
      return size;
    },
    capacity,
    entries() {
      const out: JournaledEvent[] = [];
      for (let i = 0; i < size; i++) out.push(at(i));
      return out;
    },
  };
}
