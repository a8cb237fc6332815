// A growing list of observations (log lines, WebSocket frames, webhook deliveries) that tests wait on by predicate.

/** Items seen so far, plus event-driven waits for the next match. */
export interface Feed<T> {
  readonly items: readonly T[];
  /** Record an item and wake the waiters it satisfies. */
  push(item: T): void;
  /** No more items will come (process exited, socket closed): pending waits fail now with `reason`. */
  end(reason: string): void;
  /** Resolve with the first item at index ≥ `from` matching `predicate`, already seen or still to come. */
  waitFor<S extends T>(predicate: (item: T) => item is S, options: WaitOptions): Promise<S>;
  waitFor(predicate: (item: T) => boolean, options: WaitOptions): Promise<T>;
  /** Index of the next item, to wait only for what arrives after this point. */
  mark(): number;
}

/** How long to wait and what for (the description goes into the timeout error). */
export interface WaitOptions {
  readonly timeoutMs: number;
  readonly what: string;
  readonly from?: number;
}

interface Waiter<T> {
  readonly predicate: (item: T) => boolean;
  readonly resolve: (item: T) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** Build an empty feed; `describe` renders the recent items for a timeout message. */
export function createFeed<T>(
  describe: (recent: readonly T[]) => string = (r) => JSON.stringify(r),
): Feed<T> {
  const items: T[] = [];
  const waiters = new Set<Waiter<T>>();
  let ended: string | undefined;
  const settle = (waiter: Waiter<T>): void => {
    clearTimeout(waiter.timer);
    waiters.delete(waiter);
  };
  function waitFor(predicate: (item: T) => boolean, { timeoutMs, what, from = 0 }: WaitOptions): Promise<T> {
    const seen = items.slice(from).find(predicate);
    if (seen !== undefined) return Promise.resolve(seen);
    if (ended !== undefined)
      return Promise.reject(new Error(`${what}: ${ended}; recent: ${describe(items.slice(-8))}`));
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
        predicate,
        resolve,
        reject: (error) => reject(new Error(`${what}: ${error.message}`)),
        timer: setTimeout(() => {
          settle(waiter);
          reject(
            new Error(
              `timed out after ${timeoutMs} ms waiting for ${what}; recent: ${describe(items.slice(-8))}`,
            ),
          );
        }, timeoutMs),
      };
      waiters.add(waiter);
    });
  }
  return {
    items,
    push(item) {
      items.push(item);
      for (const waiter of [...waiters]) {
        if (!waiter.predicate(item)) continue;
        settle(waiter);
        waiter.resolve(item);
      }
    },
    end(reason) {
      ended = reason;
      for (const waiter of [...waiters]) {
        settle(waiter);
        waiter.reject(new Error(`${reason}; recent: ${describe(items.slice(-8))}`));
      }
    },
    mark: () => items.length,
    // one implementation for both overloads: a type guard is just a predicate at run time
    waitFor,
  };
}
