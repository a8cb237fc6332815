// A loop's sleep that ends early on demand: the sink worker sleeps until its next due time or a new entry.
import type { Timers } from "../../http-client.js";

/** Sleeps of the loop that end early on `wake()`; a wake while the loop is busy ends its next sleep at once. */
export interface Waker {
  readonly wake: () => void;
  /** Resolve after `delayMs`, or only when woken when undefined. */
  readonly sleep: (delayMs: number | undefined) => Promise<void>;
}

/** Create the waker of one loop; sleeps use the injected timers. */
export function createWaker(timers: Timers): Waker {
  let wakeFn: (() => void) | undefined;
  let wokenEarly = false; // a wake that arrived while the loop was busy, not sleeping
  return {
    wake: () => {
      if (wakeFn === undefined) wokenEarly = true;
      else wakeFn();
    },
    sleep: (delayMs) =>
      new Promise((resolve) => {
        if (wokenEarly) {
          wokenEarly = false;
          resolve();
          return;
        }
        const handle =
          delayMs === undefined ? undefined : timers.setTimer(() => done(), Math.max(0, delayMs));
        const done = (): void => {
          if (handle !== undefined) timers.clearTimer(handle);
          wakeFn = undefined;
          resolve();
        };
        wakeFn = done;
      }),
  };
}
