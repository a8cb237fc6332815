// Timer coalescing: work due within one slot shares one base timer, runs on the grid, in order, and can be cancelled.
import { TestScheduler } from "rxjs/testing";
import { describe, expect, it, vi } from "vitest";
import type { Subscription } from "rxjs";
import { coalescingClock, timerClock, type PollClock } from "../../src/pipeline/coalescing-clock.js";

/** A base clock on a TestScheduler that counts how many timers were asked of it. */
function countingBase(scheduler: TestScheduler): PollClock & { timers: number } {
  const base = {
    timers: 0,
    now: () => scheduler.now(),
    schedule(work: () => void, delayMs: number): Subscription {
      base.timers++;
      return scheduler.schedule(work, delayMs);
    },
  };
  return base;
}

/** Run `body` in virtual time; returns what ran, as `label@time`. */
function inVirtualTime(body: (clock: PollClock, ran: (label: string) => () => void) => void, slotMs = 100) {
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  const base = countingBase(scheduler);
  const log: string[] = [];
  scheduler.run(() => {
    const clock = coalescingClock(base, slotMs);
    body(clock, (label) => () => log.push(`${label}@${scheduler.now()}`));
  });
  return { log, timers: base.timers };
}

describe("coalescingClock", () => {
  it("runs work due within one slot together, on the nearest grid point, in scheduling order", () => {
    const { log, timers } = inVirtualTime((clock, ran) => {
      clock.schedule(ran("a"), 1_020);
      clock.schedule(ran("b"), 960);
      clock.schedule(ran("c"), 1_049);
      clock.schedule(ran("d"), 1_051);
    });
    expect(log).toEqual(["a@1000", "b@1000", "c@1000", "d@1100"]);
    expect(timers).toBe(2);
  });

  it("moves work at most half a slot either way and never before now", () => {
    const scheduler = new TestScheduler((x, y) => expect(x).toEqual(y));
    const log: string[] = [];
    scheduler.run(() => {
      const clock = coalescingClock(countingBase(scheduler), 100);
      const ran = (label: string) => () => log.push(`${label}@${scheduler.now()}`);
      scheduler.schedule(() => {
        // now = 130: due 170 rounds to 200; due 140 would round to 100, in the past, so it runs at 130
        clock.schedule(ran("late"), 40);
        clock.schedule(ran("soon"), 10);
      }, 130);
    });
    expect(log).toEqual(["soon@130", "late@200"]);
  });

  it("passes work with no delay, and everything when the slot is 0, straight to the base clock", () => {
    const immediate = inVirtualTime((clock, ran) => {
      clock.schedule(ran("now"), 0);
    });
    expect(immediate.log).toEqual(["now@0"]);
    const off = inVirtualTime((clock, ran) => {
      clock.schedule(ran("a"), 1_020);
      clock.schedule(ran("b"), 960);
    }, 0);
    expect(off.log).toEqual(["b@960", "a@1020"]);
    expect(off.timers).toBe(2);
  });

  it("cancels one piece of work without touching the rest of its slot, and drops an emptied slot's timer", () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    const base = countingBase(scheduler);
    const log: string[] = [];
    let cancelledSlotRan = false;
    scheduler.run(() => {
      const clock = coalescingClock(base, 100);
      clock.schedule(() => log.push("kept"), 1_000);
      clock.schedule(() => log.push("cancelled"), 990).unsubscribe();
      const alone = clock.schedule(() => (cancelledSlotRan = true), 2_000);
      alone.unsubscribe();
      alone.unsubscribe(); // idempotent
    });
    expect(log).toEqual(["kept"]);
    expect(cancelledSlotRan).toBe(false);
    expect(base.timers).toBe(2);
  });

  it("runs the rest of a slot when one piece of work throws, then rethrows the first error", () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    const log: string[] = [];
    expect(() =>
      scheduler.run(() => {
        const clock = coalescingClock(countingBase(scheduler), 100);
        clock.schedule(() => {
          throw new Error("first");
        }, 100);
        clock.schedule(() => {
          throw new Error("second");
        }, 100);
        clock.schedule(() => log.push("after"), 100);
      }),
    ).toThrow("first");
    expect(log).toEqual(["after"]);
  });

  it("rejects a negative or non-finite slot width", () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    expect(() => coalescingClock(countingBase(scheduler), -1)).toThrow(RangeError);
    expect(() => coalescingClock(countingBase(scheduler), Number.NaN)).toThrow(RangeError);
    expect(() => coalescingClock(countingBase(scheduler), Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

describe("timerClock", () => {
  it("runs work on Node's timers after its delay, reads Date.now, and cancels", () => {
    vi.useFakeTimers({ now: 1_000 });
    try {
      const ran: string[] = [];
      expect(timerClock.now()).toBe(1_000);
      timerClock.schedule(() => ran.push(`a@${Date.now()}`), 250);
      const cancelled = timerClock.schedule(() => ran.push("b"), 100);
      cancelled.unsubscribe();
      // under a coalescing clock, as the daemon runs it: due times on the grid, one timer per slot
      const clock = coalescingClock(timerClock, 100);
      clock.schedule(() => ran.push(`c@${Date.now()}`), 140);
      clock.schedule(() => ran.push(`d@${Date.now()}`), 120);
      vi.advanceTimersByTime(99);
      expect(ran).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(ran).toEqual(["c@1100", "d@1100"]);
      vi.advanceTimersByTime(150);
      expect(ran).toEqual(["c@1100", "d@1100", "a@1250"]);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
