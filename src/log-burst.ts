// Rate-limited logging of repeated refusals: the first one of a burst at once, then one line per window with a count.
import type { Logger } from "pino";

/** A log line that repeats under attack (refused upgrades, failed auth). */
export interface BurstLog {
  /** Record one occurrence with its fields (the latest fields are the ones the summary line carries). */
  note(fields: Record<string, unknown>): void;
  /** Flush the pending count now and stop the window timer (shutdown). */
  close(): void;
}

export interface BurstLogOptions {
  readonly logger: Logger;
  readonly message: string;
  /** Length of one summarising window (ms); 10 s keeps a flood to 6 lines a minute. */
  readonly windowMs: number;
}

/**
 * The first occurrence is logged at warn with `count: 1`; later ones in the same window are counted and
 * logged as one line (`count`, `windowMs`) when the window ends. A window with no more occurrences closes.
 */
export function createBurstLog(options: BurstLogOptions): BurstLog {
  const { logger, message, windowMs } = options;
  let timer: NodeJS.Timeout | null = null;
  let pending = 0;
  let lastFields: Record<string, unknown> = {};

  const flush = (): void => {
    if (pending === 0) {
      if (timer !== null) clearInterval(timer);
      timer = null;
      return;
    }
    logger.warn({ ...lastFields, count: pending, windowMs }, `${message} (repeated)`);
    pending = 0;
  };

  return {
    note(fields) {
      if (timer === null) {
        logger.warn({ ...fields, count: 1 }, message);
        timer = setInterval(flush, windowMs);
        timer.unref();
        return;
      }
      pending += 1;
      lastFields = fields;
    },
    close() {
      if (pending > 0) flush();
      if (timer !== null) clearInterval(timer);
      timer = null;
    },
  };
}
