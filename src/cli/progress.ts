// A one-line progress bar on stderr for long fetches and replays, drawn only when stderr is a terminal.

/** Where the bar is drawn. */
export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

/** A bar: told how far the work is, cleared when it ends. */
export interface Progress {
  /** `done` of `total` units finished. */
  update(done: number, total: number): void;
  /** Clear the line (the report follows on stdout). */
  end(): void;
}

const WIDTH = 30;

/** A bar labelled `label` on `stream`, or one that writes nothing when `stream` is not a terminal. */
export function createProgress(stream: ProgressStream, label: string): Progress {
  if (stream.isTTY !== true) return { update: () => undefined, end: () => undefined };
  let shownPercent = -1;
  return {
    update(done, total) {
      const percent = total <= 0 ? 100 : Math.min(100, Math.floor((done / total) * 100));
      if (percent === shownPercent) return;
      shownPercent = percent;
      const filled = Math.round((percent / 100) * WIDTH);
      stream.write(`\r${label} [${"#".repeat(filled)}${"-".repeat(WIDTH - filled)}] ${percent}%`);
    },
    end() {
      if (shownPercent >= 0) stream.write(`\r${" ".repeat(label.length + WIDTH + 8)}\r`);
      shownPercent = -1;
    },
  };
}

/**
 * `items` passed through, the bar advanced each time the unit `unitOf` names changes (a recording's files) out of
 * `total` units, and ended after the last item.
 */
export function* withProgress<T>(
  items: Iterable<T>,
  unitOf: (item: T) => string,
  total: number,
  progress: Progress,
): Generator<T> {
  let unit: string | undefined;
  let done = 0;
  progress.update(0, total);
  try {
    for (const item of items) {
      const next = unitOf(item);
      if (next !== unit) {
        if (unit !== undefined) progress.update(++done, total);
        unit = next;
      }
      yield item;
    }
    progress.update(total, total);
  } finally {
    progress.end();
  }
}
