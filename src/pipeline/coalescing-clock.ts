// Timer coalescing for the poll streams: work due close together runs in one wake-up instead of one each.
import { Subscription } from "rxjs";

/** The slice of an RxJS scheduler the poll streams use; any SchedulerLike (asyncScheduler, TestScheduler) is one. */
export interface PollClock {
  now(): number;
  schedule(work: () => void, delayMs: number): Subscription;
}

/** One scheduled piece of work waiting in its slot. */
interface SlotEntry {
  readonly work: () => void;
}

/** The work due in one slot and the base timer that will run it. */
interface Slot {
  readonly entries: Set<SlotEntry>;
  timer: Subscription;
}

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
    for (const entry of slot.entries) {
      try {
        entry.work();
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
        const created: Slot = { entries: new Set(), timer: Subscription.EMPTY };
        slots.set(due, created);
        created.timer = base.schedule(() => runSlot(due), due - now);
        slot = created;
      }
      const entry: SlotEntry = { work };
      const owner = slot;
      owner.entries.add(entry);
      return new Subscription(() => {
        if (!owner.entries.delete(entry) || owner.entries.size > 0) return;
        // the last waiting work was cancelled: drop the slot and its timer
        if (slots.get(due) === owner) slots.delete(due);
        owner.timer.unsubscribe();
      });
    },
  };
}
