// The silences file (`silences.json` in state.dir): written atomically on every change, read back entry by entry.
import { join } from "node:path";
import type { Logger } from "pino";
import { z } from "zod";
import type { Silence, SilenceState } from "../domain/silence.js";
import { silenceProblem } from "../domain/silence.js";
import { MAX_UPDATED_AT_AHEAD_MS, updatedInFuture } from "../domain/silence-set.js";
import { quarantine, readJsonFile, writeFileAtomic } from "./atomic-file.js";

/** The version this build writes and reads. */
const SILENCE_FILE_VERSION = 1;

/** One matcher as Alertmanager's API v2 writes it (`isEqual` defaults to true, as there). */
export const SILENCE_MATCHER = z
  .object({
    name: z
      .string()
      .min(1)
      .max(128)
      .describe("label name: rule, severity, pair, source, publisher, network, ..."),
    value: z.string().max(1_024).describe("the value, or an anchored regular expression when isRegex"),
    isRegex: z.boolean(),
    isEqual: z.boolean().default(true).describe("false negates the matcher (!= or !~)"),
  })
  // a misspelt field (isEquals) must not silently turn a matcher into its opposite
  .strict();

/** A stored silence. */
export const SILENCE = z.object({
  id: z.string().min(1).max(128),
  matchers: z.array(SILENCE_MATCHER).min(1).max(32),
  startsAt: z.iso.datetime({ offset: true }),
  endsAt: z.iso.datetime({ offset: true }),
  createdBy: z.string().max(256),
  comment: z.string().max(4_096),
  updatedAt: z.iso.datetime({ offset: true }),
});

const SILENCE_FILE = z.object({
  version: z.literal(SILENCE_FILE_VERSION),
  silences: z.array(z.unknown()),
  // absent in files written before it was kept: then nothing that changed while the daemon was down is announced
  checkedStates: z.unknown().optional(),
});

/** Each silence's and window's state at the silencer's last check, by id (what a change by time is measured from). */
const CHECKED_STATES = z.record(z.string().max(256), z.enum(["pending", "active", "expired"]));

/** What the silences file holds. */
export interface StoredSilences {
  readonly silences: readonly Silence[];
  /**
   * The state of each silence and maintenance window when the daemon last checked them: a silence that ended (or
   * a window that started or ended) after that was not announced. Undefined when the file does not say.
   */
  readonly checkedStates: ReadonlyMap<string, SilenceState> | undefined;
  /** How many silences had an `updatedAt` more than MAX_UPDATED_AT_AHEAD_MS ahead of the clock: read with it set to now. */
  readonly clampedCount: number;
}

/** Nothing stored. */
const NO_SILENCES: StoredSilences = { silences: [], checkedStates: undefined, clampedCount: 0 };

/** Where the silences of `stateDir` live. */
export function silenceFilePath(stateDir: string): string {
  return join(stateDir, "silences.json");
}

/** How to read the silences file. */
export interface ReadSilencesOptions {
  /**
   * Set an `updatedAt` more than MAX_UPDATED_AT_AHEAD_MS ahead of `nowMs` to now (a daemon running alone); when
   * false (cluster mode) it is kept as it is, with a warning: the other members may hold that version, and a lower
   * `updatedAt` here would make them ignore this member's next change of it.
   */
  readonly clampFutureUpdatedAt: boolean;
}

/**
 * Read the silences; a damaged file is moved aside and a damaged entry dropped (each logged), so a bad write
 * by hand never keeps the daemon from starting; an `updatedAt` too far ahead is set to now when
 * `clampFutureUpdatedAt` (logged, counted by the caller), else logged. Expired entries stay: the caller prunes.
 */
export function readSilences(
  path: string,
  nowMs: number,
  logger: Logger,
  options: ReadSilencesOptions,
): StoredSilences {
  const read = readJsonFile(path, nowMs);
  if (read.kind === "missing") return NO_SILENCES;
  if (read.kind === "corrupt") {
    logger.error({ movedTo: read.movedTo, reason: read.reason }, "silences file unreadable: moved aside");
    return NO_SILENCES;
  }
  const file = SILENCE_FILE.safeParse(read.value);
  if (!file.success) {
    const movedTo = quarantine(path, nowMs);
    logger.error({ movedTo }, "silences file has an unknown format: moved aside");
    return NO_SILENCES;
  }
  const silences: Silence[] = [];
  let clampedCount = 0;
  for (const [index, entry] of file.data.silences.entries()) {
    const parsed = SILENCE.safeParse(entry);
    // a stored silence passed these checks when it was created; one that fails them now was edited by hand
    const problem = parsed.success ? silenceProblem(parsed.data) : parsed.error.issues[0]?.message;
    if (!parsed.success || problem !== null) {
      logger.error({ index, reason: problem }, "silences file: dropped an invalid silence");
      continue;
    }
    const silence = futureChecked(parsed.data, index, nowMs, options, logger);
    silences.push(silence);
    if (silence !== parsed.data) clampedCount++;
  }
  return { silences, checkedStates: checkedStatesOf(file.data.checkedStates, logger), clampedCount };
}

/**
 * `silence`, or a copy with `updatedAt` set to now when it is too far ahead and `clampFutureUpdatedAt` (logged
 * either way). Kept, never dropped: its matchers and times still hold, and dropping it would unmute what it mutes.
 */
function futureChecked(
  silence: Silence,
  index: number,
  nowMs: number,
  options: ReadSilencesOptions,
  logger: Logger,
): Silence {
  if (!updatedInFuture(silence, nowMs)) return silence;
  const fields = { index, id: silence.id, updatedAt: silence.updatedAt, maxAheadMs: MAX_UPDATED_AT_AHEAD_MS };
  if (!options.clampFutureUpdatedAt) {
    logger.warn(
      fields,
      "silences file: a silence's updatedAt is ahead of the clock (this member's clock is behind the cluster's?): kept as it is in cluster mode",
    );
    return silence;
  }
  const updatedAt = new Date(nowMs).toISOString();
  logger.error(
    { ...fields, setTo: updatedAt },
    "silences file: a silence's updatedAt is ahead of the clock (edited by hand, or the clock stepped back): set to now",
  );
  return { ...silence, updatedAt };
}

/** The file's checked states; undefined (logged when present but damaged) when it has none worth trusting. */
function checkedStatesOf(value: unknown, logger: Logger): ReadonlyMap<string, SilenceState> | undefined {
  if (value === undefined) return undefined;
  const parsed = CHECKED_STATES.safeParse(value);
  if (parsed.success) return new Map(Object.entries(parsed.data));
  logger.error(
    { reason: parsed.error.issues[0]?.message },
    "silences file: checkedStates unreadable, so a silence that ended while the daemon was down is not announced",
  );
  return undefined;
}

/**
 * Write every silence, and the states of the last check, atomically (fsync'd before this returns: an answered
 * POST survives kill -9).
 */
export function writeSilences(
  path: string,
  silences: readonly Silence[],
  checkedStates?: ReadonlyMap<string, SilenceState>,
): void {
  const states = checkedStates === undefined ? undefined : Object.fromEntries(checkedStates);
  writeFileAtomic(
    path,
    `${JSON.stringify({ version: SILENCE_FILE_VERSION, silences, checkedStates: states })}\n`,
  );
}
