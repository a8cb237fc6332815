// Logs the list items upstream decoders skip once per burst, so a bad item repeated on every poll is one line.
import type { Logger } from "pino";
import type { SkippedItem, SkippedItemObserver } from "./decode.js";

/** Options of createSkippedItemLog; the clock is injected. */
export interface SkippedItemLogOptions {
  readonly logger: Logger;
  readonly nowMs: () => number;
  /** A skip of the same kind after this long without one starts a new burst (logged again at warn). */
  readonly quietMs?: number;
  /** Bound of the remembered kinds; when full they are forgotten at once (the next skips log again). */
  readonly maxKinds?: number;
}

/** Ten minutes: longer than any poll period, so a bad item seen on every poll stays one burst. */
const DEFAULT_QUIET_MS = 600_000;
const DEFAULT_MAX_KINDS = 256;

/** Where an item failed, indices dropped: the same bad field of another item is the same kind of skip. */
export function skipKind(item: SkippedItem): string {
  return `${item.endpoint} ${item.field.replace(/\[\d+\]/g, "[]")}`;
}

/**
 * An observer that logs the first skip of each kind at warn (with the field and what was expected) and
 * the rest of its burst at debug; a burst ends after `quietMs` without a skip of that kind.
 */
export function createSkippedItemLog(options: SkippedItemLogOptions): SkippedItemObserver {
  const { logger, nowMs } = options;
  const quietMs = options.quietMs ?? DEFAULT_QUIET_MS;
  const maxKinds = options.maxKinds ?? DEFAULT_MAX_KINDS;
  /** Last skip time of each kind, and how many of its burst went to debug. */
  const lastSeen = new Map<string, { atMs: number; quieted: number }>();
  return (item) => {
    const kind = skipKind(item);
    const atMs = nowMs();
    const seen = lastSeen.get(kind);
    const fields = { endpoint: item.endpoint, field: item.field, expected: item.expected };
    if (seen !== undefined && atMs - seen.atMs < quietMs) {
      seen.atMs = atMs;
      seen.quieted++;
      logger.debug(fields, "upstream list item skipped");
      return;
    }
    if (seen === undefined && lastSeen.size >= maxKinds) lastSeen.clear();
    lastSeen.set(kind, { atMs, quieted: 0 });
    logger.warn(
      { ...fields, previousBurstSkips: seen === undefined ? 0 : seen.quieted + 1 },
      "upstream list item skipped (bad item left out; more of this kind are logged at debug)",
    );
  };
}
