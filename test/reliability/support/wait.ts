// Event-driven waiting helpers: a condition re-checked on every notification, bounded by a deadline.

/** A set of waiters woken whenever something they may be waiting for happened. */
export class Signal {
  #waiters = new Set<() => void>();

  /** Wake every waiter (they re-check their condition). */
  notify(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }

  /** Resolve once `condition()` holds, re-checking on each notify; reject with `what` after `timeoutMs`. */
  async until(condition: () => boolean, what: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, remainingMs);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.#waiters.add(done);
      });
    }
  }
}

/** Resolve when `emitter` emits `event` (once). */
export function once(
  emitter: { once(event: string, listener: (...args: unknown[]) => void): unknown },
  event: string,
): Promise<unknown[]> {
  return new Promise((resolve) => emitter.once(event, (...args: unknown[]) => resolve(args)));
}
