// Logs the list items upstream decoders skip once per burst of each kind, so a bad item repeated on every poll is one line.
import type { Logger } from "pino";
import { createBurstLog } from "../log-burst.js";
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

/** Where an item failed, indices dropped: the same bad field of another item is the same kind of skip. */
export function skipKind(item: SkippedItem): string {
  return `${item.endpoint} ${item.field.replace(/\[\d+\]/g, "[]")}`;
}

/**
 * An observer that logs the first skip of each kind at warn (with the field and what was expected), the rest
 * of its burst at debug with a count at warn every `quietMs`; a burst ends after `quietMs` without a skip of
 * that kind.
 */
export function createSkippedItemLog(options: SkippedItemLogOptions): SkippedItemObserver {
  const log = createBurstLog({
    logger: options.logger,
    message: "upstream list item skipped (the bad item is left out)",
    nowMs: options.nowMs,
    windowMs: options.quietMs ?? DEFAULT_QUIET_MS,
    debugEachRepeat: true,
    ...(options.maxKinds === undefined ? {} : { maxKinds: options.maxKinds }),
  });
  return (item) =>
    log.note({ endpoint: item.endpoint, field: item.field, expected: item.expected }, skipKind(item));
}
