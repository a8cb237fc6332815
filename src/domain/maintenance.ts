// Maintenance windows: named recurring silences from config (weekly wall-clock ranges, or cron + duration, in a time
// zone), turned into the silence each window is at a given time, so the rest of the system treats them as silences.
//
// Occurrences are computed with croner: pure calendar arithmetic over Intl time zones. Every call passes the
// reference time; no job is scheduled (no callback is given), so croner starts no timer and reads no clock that
// matters. Its one state is a cache of Intl formatters per zone name, which changes no result.
import { Cron } from "croner";
import { nextSilenceChangeMs, type Silence, type SilenceMatcher } from "./silence.js";

/** Days of a weekly window, as config writes them (Monday first). */
export const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A weekly window: on each of `days`, from `start` to `end` (HH:MM wall clock); an end before the start is the next day's. */
export interface WeeklySchedule {
  readonly days: readonly Weekday[];
  readonly start: string;
  readonly end: string;
}

/** What every window has besides its schedule. */
interface WindowCommon {
  /** Unique; the silence id is `maintenance:<name>`. */
  readonly name: string;
  readonly matchers: readonly SilenceMatcher[];
  readonly comment: string;
  /** IANA zone name the schedule's wall-clock times are read in. */
  readonly timeZone: string;
}

/** A maintenance window: weekly, or a cron expression (5 fields) with a duration from each start. */
export type MaintenanceWindow = WindowCommon &
  ({ readonly weekly: WeeklySchedule } | { readonly cron: string; readonly durationMs: number });

/** One occurrence of a window: it mutes in [startMs, endMs). */
export interface MaintenanceOccurrence {
  readonly startMs: number;
  readonly endMs: number;
}

/** Who the silence of a window says created it. */
export const MAINTENANCE_CREATED_BY = "config";
const ID_PREFIX = "maintenance:";

/** The silence id of the window `name`. */
export function maintenanceSilenceId(name: string): string {
  return `${ID_PREFIX}${name}`;
}

/** Whether a silence id is a maintenance window's (such a silence lives in config: the API cannot expire it). */
export function isMaintenanceSilenceId(id: string): boolean {
  return id.startsWith(ID_PREFIX);
}

/** A weekly window is at most 24 h of wall clock, plus the hour a DST change can add. */
const WEEKLY_MAX_LENGTH_MS = 26 * 3_600_000;
/** Starts tried to find the occurrence around a time: a weekly window has at most two in its 26 h look-back. */
const MAX_STEPS = 16;
/** Overlapping or back-to-back occurrences merged into one (a cron whose duration outlasts its period). */
const MAX_MERGED = 64;

/** A window's schedule as croner runs: when occurrences start, and when the one starting at a time ends. */
interface CompiledSchedule {
  readonly starts: Cron;
  readonly endAfterMs: (startMs: number) => number | null;
  /** No occurrence lasts longer: the look-back for one active now. */
  readonly maxLengthMs: number;
}

/** The next run of `cron` strictly after `afterMs` (croner works in whole seconds), or null when none. */
function nextRunMs(cron: Cron, afterMs: number): number | null {
  return cron.nextRun(new Date(afterMs))?.getTime() ?? null;
}

/** Minutes since midnight of an "HH:MM" time of day. */
function minutesOfDay(time: string): number {
  const [hours = "0", minutes = "0"] = time.split(":");
  return Number(hours) * 60 + Number(minutes);
}

/** A 5-field cron expression firing at `minutes` past midnight on `days`, shifted `dayShift` days later. */
function weeklyCron(minutes: number, days: readonly Weekday[], dayShift: number): string {
  const numbers = days.map((day) => (WEEKDAYS.indexOf(day) + 1 + dayShift) % 7); // cron: 0 = Sunday
  const list = [...new Set(numbers)].sort((a, b) => a - b).join(",");
  return `${minutes % 60} ${Math.floor(minutes / 60)} * * ${list}`;
}

/**
 * Compile a window: a weekly one becomes two cron expressions, its starts and its ends (on the next day's list when
 * it crosses midnight), so both ends are wall-clock times exactly, across DST changes too (a fixed duration would
 * be an hour off on those days). Throws on an invalid expression or zone (config validation refuses them first).
 */
function compileSchedule(window: MaintenanceWindow): CompiledSchedule {
  const options = { timezone: window.timeZone, mode: "5-part" } as const;
  if ("weekly" in window) {
    const { days, start, end } = window.weekly;
    const startMinutes = minutesOfDay(start);
    const endMinutes = minutesOfDay(end);
    const ends = new Cron(weeklyCron(endMinutes, days, endMinutes < startMinutes ? 1 : 0), options);
    return {
      starts: new Cron(weeklyCron(startMinutes, days, 0), options),
      // at or after the start: in a DST gap both ends may land on the same instant (an empty occurrence)
      endAfterMs: (startMs) => nextRunMs(ends, startMs - 1_000),
      maxLengthMs: WEEKLY_MAX_LENGTH_MS,
    };
  }
  const { durationMs } = window;
  return {
    starts: new Cron(window.cron, options),
    endAfterMs: (startMs) => startMs + durationMs,
    maxLengthMs: durationMs,
  };
}

/** The occurrence of `window` active at `nowMs`, else the next one; null when it never occurs again. */
export function maintenanceOccurrence(
  window: MaintenanceWindow,
  nowMs: number,
): MaintenanceOccurrence | null {
  return occurrenceAt(compileSchedule(window), nowMs);
}

/** The occurrence of a compiled schedule active at `nowMs`, else the next one, or null. */
function occurrenceAt(schedule: CompiledSchedule, nowMs: number): MaintenanceOccurrence | null {
  let startMs = nextRunMs(schedule.starts, nowMs - schedule.maxLengthMs);
  for (let step = 0; startMs !== null && step < MAX_STEPS; step += 1) {
    const endMs = schedule.endAfterMs(startMs);
    if (endMs !== null && endMs > startMs && endMs > nowMs) return merged(schedule, startMs, endMs);
    startMs = nextRunMs(schedule.starts, startMs);
  }
  return null;
}

/** The occurrence from `startMs` to `endMs`, extended over the following ones that start before it ends. */
function merged(schedule: CompiledSchedule, startMs: number, endMs: number): MaintenanceOccurrence {
  let untilMs = endMs;
  let nextMs = nextRunMs(schedule.starts, startMs);
  for (let step = 0; nextMs !== null && nextMs <= untilMs && step < MAX_MERGED; step += 1) {
    untilMs = Math.max(untilMs, schedule.endAfterMs(nextMs) ?? untilMs);
    nextMs = nextRunMs(schedule.starts, nextMs);
  }
  return { startMs, endMs: untilMs };
}

/** The silence a window is during (or before) one occurrence. */
function windowSilence(window: MaintenanceWindow, occurrence: MaintenanceOccurrence): Silence {
  const startsAt = new Date(occurrence.startMs).toISOString();
  return {
    id: maintenanceSilenceId(window.name),
    matchers: window.matchers,
    startsAt,
    endsAt: new Date(occurrence.endMs).toISOString(),
    createdBy: MAINTENANCE_CREATED_BY,
    comment: window.comment,
    updatedAt: startsAt,
  };
}

/** A config's windows compiled once, answering for any time; see createMaintenanceCalendar. */
export interface MaintenanceCalendar {
  /** maintenanceSilences(windows, nowMs), computed again only once a window started or ended since the last call. */
  silencesAt(nowMs: number): readonly Silence[];
  /** nextMaintenanceChangeMs(windows, nowMs), from the same cache. */
  nextChangeMs(nowMs: number): number | null;
}

/**
 * Compile `windows` once and keep their silences until one starts or ends: a lookup costs nothing between changes,
 * where computing occurrences costs croner about 0.5 ms per window (measured: a weekly pattern's nextRun in
 * Europe/Paris takes ~0.24 ms, and an occurrence needs two or three). Owned by its caller (one per loaded config).
 */
export function createMaintenanceCalendar(windows: readonly MaintenanceWindow[]): MaintenanceCalendar {
  const compiled = windows.map((window) => ({ window, schedule: compileSchedule(window) }));
  let cached: { fromMs: number; untilMs: number | null; silences: readonly Silence[] } | null = null;
  const at = (nowMs: number) => {
    // the silences hold from the time they were computed until the next start or end (or forever when none)
    if (cached === null || nowMs < cached.fromMs || (cached.untilMs !== null && nowMs >= cached.untilMs)) {
      const silences = compiled.flatMap(({ window, schedule }) => {
        const occurrence = occurrenceAt(schedule, nowMs);
        return occurrence === null ? [] : [windowSilence(window, occurrence)];
      });
      cached = { fromMs: nowMs, untilMs: nextSilenceChangeMs(silences, nowMs), silences };
    }
    return cached;
  };
  return { silencesAt: (nowMs) => at(nowMs).silences, nextChangeMs: (nowMs) => at(nowMs).untilMs };
}

/**
 * Each window as the silence it is at `nowMs`: id `maintenance:<name>`, created by "config", its comment, and the
 * times of the occurrence active now (state active) or else the next one (pending); a window that never occurs
 * again has none. `updatedAt` is the occurrence's start.
 */
export function maintenanceSilences(windows: readonly MaintenanceWindow[], nowMs: number): Silence[] {
  return [...createMaintenanceCalendar(windows).silencesAt(nowMs)];
}

/** The next time after `nowMs` that any window starts or ends (when maintenanceSilences next changes), or null. */
export function nextMaintenanceChangeMs(windows: readonly MaintenanceWindow[], nowMs: number): number | null {
  return createMaintenanceCalendar(windows).nextChangeMs(nowMs);
}

/** IANA zone names: "UTC", "Europe/Paris", "America/Argentina/Buenos_Aires", "Etc/GMT+2" (no bare offsets). */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/**
 * Whether `timeZone` is an IANA zone name this runtime knows (case as written: ICU's resolved name may be an older
 * alias, e.g. America/Buenos_Aires, so the name is kept as the operator wrote it).
 */
export function isTimeZone(timeZone: string): boolean {
  if (!ZONE_NAME.test(timeZone)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return true;
  } catch {
    return false; // RangeError: a zone this runtime's ICU does not know
  }
}

/** A reference far enough back that a 5-field expression that ever fires fires after it (croner searches to 3000). */
const NEVER_REFERENCE_MS = Date.UTC(2000, 0, 1);

/** Why a window's schedule cannot run, as the window's key and the reason, or null (its zone must be valid). */
export function maintenanceScheduleProblem(
  window: MaintenanceWindow,
): { readonly key: string; readonly reason: string } | null {
  if ("weekly" in window) {
    if (minutesOfDay(window.weekly.start) === minutesOfDay(window.weekly.end))
      return {
        key: "weekly.end",
        reason: "must differ from start (an end before the start is the next day's)",
      };
    return null;
  }
  let starts: Cron;
  try {
    starts = new Cron(window.cron, { timezone: window.timeZone, mode: "5-part" });
  } catch (error) {
    const detail = (error as Error).message.replace(/^Cron(Pattern|Options)?: /, "");
    return {
      key: "cron",
      reason: `not a 5-field cron expression (minute hour day month weekday): ${detail}`,
    };
  }
  if (nextRunMs(starts, NEVER_REFERENCE_MS) === null)
    return { key: "cron", reason: `"${window.cron}" never fires (no such date)` };
  return null;
}
