// Once-per-burst logging of a repeating condition (refused requests, skipped upstream items): one warn line per burst, a count per window.
import type { Logger } from "pino";

/** A log line that repeats: under attack (refused upgrades, failed auth) or on every poll (a bad upstream item). */
export interface BurstLog {
  /** Record one occurrence of `kind` (one kind unless given) with its fields. */
  note(fields: Record<string, unknown>, kind?: string): void;
  /** Write the counts not reported yet and forget every burst (shutdown). */
  close(): void;
}

/** Options of createBurstLog; the clock is injected and no timer is kept. */
export interface BurstLogOptions {
  readonly logger: Logger;
  readonly message: string;
  /** Monotonic clock. */
  readonly nowMs: () => number;
  /** A burst ends after this long without an occurrence of its kind; while it lasts, one summary per window. */
  readonly windowMs: number;
  /**
   * Also write each repeat at debug (a skipped upstream item says which one); off for floods, where even
   * debug must not get one line per attempt.
   */
  readonly debugEachRepeat?: boolean;
  /** Bound of the kinds remembered; when full they are forgotten at once (their next occurrences warn again). */
  readonly maxKinds?: number;
}

/** One kind's burst: when it and its summary window started, its last occurrence, and its counts. */
interface Burst {
  windowStartMs: number;
  lastAtMs: number;
  /** Occurrences since the last line written at warn, and the fields of the latest of them. */
  unreported: number;
  lastFields: Record<string, unknown>;
  /** Occurrences of the whole burst. */
  total: number;
}

const DEFAULT_MAX_KINDS = 256;

/**
 * The first occurrence of a burst is logged at warn (`count: 1`, and `previousBurstCount`, the size of this
 * kind's previous burst), the others only at debug and only with `debugEachRepeat`; the first occurrence once
 * a window has passed since the last warn line writes a summary at warn (`count` occurrences since that line,
 * `windowMs`) with its own fields.
 * Counts left when a burst ends are carried by the next burst's first line, or written by close(): no timer
 * runs, and refusals are also counted in metrics, so a count written late loses nothing.
 */
export function createBurstLog(options: BurstLogOptions): BurstLog {
  const { logger, message, nowMs, windowMs } = options;
  const debugEachRepeat = options.debugEachRepeat ?? false;
  const maxKinds = options.maxKinds ?? DEFAULT_MAX_KINDS;
  const bursts = new Map<string, Burst>();

  const summarise = (burst: Burst): void => {
    logger.warn({ ...burst.lastFields, count: burst.unreported, windowMs }, `${message} (repeated)`);
    burst.unreported = 0;
  };
  /** Count an occurrence of a running burst, written as the summary once its window has passed. */
  const repeat = (burst: Burst, atMs: number, fields: Record<string, unknown>): void => {
    burst.lastAtMs = atMs;
    burst.unreported += 1;
    burst.total += 1;
    burst.lastFields = fields;
    if (atMs - burst.windowStartMs < windowMs) {
      if (debugEachRepeat) logger.debug(fields, message);
      return;
    }
    burst.windowStartMs = atMs;
    summarise(burst);
  };

  return {
    note(fields, kind = "") {
      const atMs = nowMs();
      const burst = bursts.get(kind);
      if (burst !== undefined && atMs - burst.lastAtMs < windowMs) return repeat(burst, atMs, fields);
      if (burst === undefined && bursts.size >= maxKinds) bursts.clear();
      bursts.set(kind, { windowStartMs: atMs, lastAtMs: atMs, unreported: 0, lastFields: fields, total: 1 });
      logger.warn({ ...fields, count: 1, previousBurstCount: burst?.total ?? 0 }, message);
    },
    close() {
      for (const burst of bursts.values()) if (burst.unreported > 0) summarise(burst);
      bursts.clear();
    },
  };
}
