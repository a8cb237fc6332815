// An in-process stand-in for the part of a NATS KV bucket the cause summaries use (put, delete, status, watch),
// stamped with an injected clock: benches drive cluster code in simulated time without a server.

/** A stored entry as the watch delivers it (the fields the cluster code reads of a KvEntry). */
export interface MemoryKvEntry {
  readonly key: string;
  readonly value: Uint8Array;
  readonly created: Date;
  readonly revision: number;
  readonly operation: "PUT" | "DEL";
  /** False for the values held when the watch started but the last of them (as @nats-io/kv says it). */
  readonly isUpdate: boolean;
  string(): string;
}

const DECODER = new TextDecoder();

/** A watch: an async iterator of entries, ended by `stop`. */
class MemoryWatch implements AsyncIterableIterator<MemoryKvEntry> {
  private readonly queue: MemoryKvEntry[] = [];
  private waiting: ((result: IteratorResult<MemoryKvEntry>) => void) | null = null;
  private stopped = false;

  constructor(private readonly onStop: (watch: MemoryWatch) => void) {}

  /** Hand an entry to the reader (or keep it until it reads). */
  push(entry: MemoryKvEntry): void {
    if (this.stopped) return;
    const waiting = this.waiting;
    this.waiting = null;
    if (waiting === null) this.queue.push(entry);
    else waiting({ value: entry, done: false });
  }

  /** End the iteration (the reader's pending read returns done). */
  stop(): void {
    this.stopped = true;
    this.onStop(this);
    this.waiting?.({ value: undefined, done: true });
    this.waiting = null;
  }

  next(): Promise<IteratorResult<MemoryKvEntry>> {
    const entry = this.queue.shift();
    if (entry !== undefined) return Promise.resolve({ value: entry, done: false });
    if (this.stopped) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<MemoryKvEntry> {
    return this;
  }
}

/** The bucket: last value per key, every watcher sees every change; `created` is `nowMs()` at the write. */
export class MemoryKv {
  private readonly entries = new Map<string, MemoryKvEntry>();
  private readonly watches = new Set<MemoryWatch>();
  private revision = 0;
  /** Puts and deletes so far. */
  writes = 0;

  /** Watches running (not stopped). */
  get watching(): number {
    return this.watches.size;
  }

  constructor(private readonly nowMs: () => number) {}

  put(key: string, value: Uint8Array): Promise<number> {
    return Promise.resolve(this.store(key, value, "PUT"));
  }

  delete(key: string): Promise<void> {
    this.store(key, new Uint8Array(), "DEL");
    return Promise.resolve();
  }

  status(): Promise<{ values: number }> {
    return Promise.resolve({ values: this.entries.size });
  }

  /** Every held entry (the last one marked an update, as NATS does), then every change; `key` is ignored. */
  watch(_options: { key: string }): Promise<MemoryWatch> {
    const watch = new MemoryWatch((stopped) => this.watches.delete(stopped));
    const held = [...this.entries.values()];
    held.forEach((entry, i) => watch.push({ ...entry, isUpdate: i === held.length - 1 }));
    this.watches.add(watch);
    return Promise.resolve(watch);
  }

  private store(key: string, value: Uint8Array, operation: "PUT" | "DEL"): number {
    this.writes++;
    this.revision++;
    const entry: MemoryKvEntry = {
      key,
      value,
      created: new Date(this.nowMs()),
      revision: this.revision,
      operation,
      isUpdate: true,
      string: () => DECODER.decode(value),
    };
    this.entries.set(key, entry);
    for (const watch of this.watches) watch.push(entry);
    return this.revision;
  }
}
