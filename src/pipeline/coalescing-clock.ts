// Timer coalescing for the poll streams: work due close together runs in one wake-up instead of one each.
import type { Unsubscribable } from "rxjs";

/** The slice of an RxJS scheduler the poll streams use; any SchedulerLike (asyncScheduler, TestScheduler) is one. */
export interface PollClock {
  now(): number;
  schedule(work: () => void, delayMs: number): Unsubscribable;
}

/** The work due in one slot, in the order it was scheduled (cancelled entries stay, marked), and the base timer that will run it. */
interface Slot {
  readonly due: number;
  readonly entries: SlotEntry[];
  /** Entries not cancelled yet: the slot and its timer are dropped when this reaches 0. */
  live: number;
  timer: Unsubscribable;
}

/**
 * One scheduled piece of work waiting in its slot; it is also what `schedule` returns (one object per call, not an
 * entry plus a Subscription plus its teardown closure: a poll stream schedules twice per poll).
 */
class SlotEntry implements Unsubscribable {
  private cancelled = false;

  constructor(
    readonly work: () => void,
    private readonly slot: Slot,
    private readonly slots: Map<number, Slot>,
  ) {}

  /** Cancel the work (idempotent); the last cancelled entry of a slot drops the slot and its timer. */
  unsubscribe(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    const { slot } = this;
    slot.live--;
    if (slot.live > 0) return;
    if (this.slots.get(slot.due) === slot) this.slots.delete(slot.due);
    slot.timer.unsubscribe();
  }

  /** Run the work unless it was cancelled; it counts as done (a later unsubscribe does nothing). */
  run(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.work();
  }
}

/**
 * Node's own timers as a PollClock: the daemon's base under the coalescing clock. RxJS's asyncScheduler, which it
 * replaces there, builds an action, a bound flush and an interval timer per schedule and clears the interval after
 * each run; here a schedule is one timeout and its cancel function. Same clock (Date.now) and the same timers.
 */
export const timerClock: PollClock = {
  now: () => Date.now(),
  schedule(work, delayMs) {
    const handle = setTimeout(work, delayMs);
    return { unsubscribe: () => clearTimeout(handle) };
  },
};

/** A timer that is never set. */
const EMPTY: Unsubscribable = { unsubscribe: () => undefined };

/**
 * Wrap `base` so that delayed work is due on a grid of `slotMs`: each due time is rounded to the nearest
 * multiple of `slotMs` (never before now), and all work of one slot shares one base timer, run in the
 * order it was scheduled. Rounding to the nearest slot (not up) keeps poll periods unbiased: a start moves
 * at most slotMs / 2 either way. Work with no delay, or any work when `slotMs` is 0, goes straight to
 * `base`.
 *
 * Why: hundreds of targets each polled every second mean hundreds of event-loop wake-ups per second, and
 * on a 2-core VM the cost of a wake-up (timers, epoll, microtask checkpoints, cold caches) outweighs the
 * request itself: measured, a bare undici loop firing its requests together costs about half of the same
 * loop spread over the period (bench/RESULTS.md, polling). The kernel's timer slack applies the same idea.
 *
 * If some work throws, the rest of its slot still runs and the first error is rethrown afterwards.
 */
export function coalescingClock(base: PollClock, slotMs: number): PollClock {
  if (!(slotMs >= 0) || !Number.isFinite(slotMs)) {
    throw new RangeError(`slotMs must be a finite number ≥ 0, got ${slotMs}`);
  }
  if (slotMs === 0) return base;
  const slots = new Map<number, Slot>();

  const runSlot = (due: number): void => {
    const slot = slots.get(due);
    slots.delete(due);
    if (slot === undefined) return;
    let failure: { readonly error: unknown } | null = null;
    // the slot left `slots` above: work scheduled while it runs goes to a new slot, never into this array
    const { entries } = slot;
    for (let i = 0; i < entries.length; i++) {
      try {
        entries[i]!.run();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== null) throw failure.error;
  };

  return {
    now: () => base.now(),
    schedule(work, delayMs) {
      if (!(delayMs > 0)) return base.schedule(work, delayMs);
      const now = base.now();
      const due = Math.max(Math.round((now + delayMs) / slotMs) * slotMs, Math.ceil(now));
      let slot = slots.get(due);
      if (slot === undefined) {
        const created: Slot = { due, entries: [], live: 0, timer: EMPTY };
        slots.set(due, created);
        created.timer = base.schedule(() => runSlot(due), due - now);
        slot = created;
      }
      const entry = new SlotEntry(work, slot, slots);
      slot.entries.push(entry);
      slot.live++;
      return entry;
    },
  };
}
