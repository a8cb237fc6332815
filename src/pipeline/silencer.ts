// Silences at run time: the stored ones and the config's maintenance windows, what they mute, and the events
// their changes cause (lifecycle events, and a re-announcement of each firing alert whose muting changed).
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { AlertPayload } from "../domain/events.js";
import { sameStrings } from "../domain/lists.js";
import {
  formatMatchers,
  nextSilenceChangeMs,
  silenceState,
  silencingIds,
  type Silence,
  type SilenceState,
} from "../domain/silence.js";
import {
  compareSilenceVersions,
  expireSilence,
  pruneSilences,
  putSilence,
  type SilenceChange,
  type SilenceInput,
  type SilenceRefusal,
} from "../domain/silence-set.js";
import { isMaintenanceSilenceId } from "../domain/maintenance.js";
import { readSilences, writeSilences } from "../state/silence-file.js";
import type { EventHub } from "./event-hub.js";

/** A silence as the API lists it: Alertmanager's gettable silence. */
export interface SilenceView extends Silence {
  readonly status: { readonly state: SilenceState };
}

/** What the silencer takes from the daemon; clock and timers injected. */
export interface SilencerOptions {
  /** The silences file (state.dir/silences.json). */
  readonly path: string;
  readonly nowMs: () => number;
  readonly logger: Logger;
  /** The config's maintenance windows as silences at `nowMs` (the occurrence active now, else the next). */
  readonly maintenance?: (nowMs: number) => readonly Silence[];
  readonly newId?: () => string;
  /**
   * Which firing alerts this daemon re-announces when their muting changes (built once per check); default all.
   * A cluster member re-announces only the alerts it speaks for, not every member's.
   */
  readonly remuteScope?: () => (alert: AlertPayload) => boolean;
  /**
   * Announce a change time made (a silence ended, a window started or ended) unless another daemon does: `claim`
   * names the change; default: announce. A cluster member announces only when it wins the claim.
   */
  readonly announceOnce?: (claim: string, announce: () => void) => void;
  /**
   * Whether an `updatedAt` in the file too far ahead of the clock is set to now (and written back); default true (a
   * daemon running alone). Cluster mode keeps it as it is (logged): other members may hold that version, and a
   * lower `updatedAt` here would make them ignore this member's next change of it.
   */
  readonly clampFutureUpdatedAt?: boolean;
  /** Told how many silences of the file had an `updatedAt` too far ahead of the clock (read with it set to now). */
  readonly onClamped?: (count: number) => void;
  /** Told each stored silence a put or expire changed, once it is persisted (cluster mode shares it). */
  readonly onStored?: (silence: Silence) => void;
  readonly setTimer?: (callback: () => void, delayMs: number) => unknown;
  readonly clearTimer?: (handle: unknown) => void;
}

/** The running silences. */
export interface Silencer {
  /** Ids of the silences and windows active now that mute `alert` (the hub's `silencing` hook). */
  silencing(alert: AlertPayload): readonly string[];
  /** Stored silences and maintenance windows with their state, live ones first. */
  list(): readonly SilenceView[];
  get(id: string): SilenceView | undefined;
  /** Create or update (Alertmanager's POST); persisted before it returns. */
  put(input: SilenceInput): SilenceChange | SilenceRefusal;
  /** Expire early (Alertmanager's DELETE); a maintenance window cannot be expired. */
  expire(id: string): SilenceChange | SilenceRefusal;
  /**
   * Take a silence another daemon stored (cluster mode): kept when newer than the one held (compareSilenceVersions:
   * `updatedAt`, then a tie-break every member computes alike), persisted,
   * and muting re-checked, announcing nothing (its maker announced it). Returns whether it was taken.
   */
  merge(silence: Silence): boolean;
  /** Publish through `hub` from now on, re-check muting now and whenever a silence starts or ends. */
  start(hub: EventHub): void;
  /** New maintenance windows (a config reload); muting is re-checked at once. */
  setMaintenance(maintenance: (nowMs: number) => readonly Silence[]): void;
  stop(): void;
}

/** Longest wait between checks, so a clock step or a missed timer is caught within a minute. */
const MAX_CHECK_DELAY_MS = 60_000;

/** The silencer's state, read and changed by the steps below. */
interface Book {
  readonly options: SilencerOptions;
  readonly setTimer: (callback: () => void, delayMs: number) => unknown;
  readonly clearTimer: (handle: unknown) => void;
  stored: readonly Silence[];
  maintenanceOf: (nowMs: number) => readonly Silence[];
  /** The windows as silences at the last check (their current or next occurrence). */
  windows: readonly Silence[];
  hub: EventHub | undefined;
  timer: unknown;
  /** The state of each silence at the last check: a change of state is what the next check announces. */
  states: Map<string, SilenceState>;
  /** The states last written to the file, so a check writes only when they changed. */
  savedStates: ReadonlyMap<string, SilenceState> | undefined;
}

/** Load the stored silences and build the silencer (nothing is published until `start`). */
export function createSilencer(options: SilencerOptions): Silencer {
  const { nowMs, logger } = options;
  const file = readSilences(options.path, nowMs(), logger, {
    clampFutureUpdatedAt: options.clampFutureUpdatedAt ?? true,
  });
  const stored = pruneSilences(file.silences, nowMs());
  const maintenanceOf = options.maintenance ?? (() => []);
  const windows = maintenanceOf(nowMs());
  const states = statesOf([...stored, ...windows], nowMs());
  // what changed while the daemon was down (a silence ended, a window started or ended) is announced at start
  for (const [id, state] of file.checkedStates ?? []) if (states.has(id)) states.set(id, state);
  const book: Book = {
    options,
    setTimer: options.setTimer ?? ((callback, delayMs) => setTimeout(callback, delayMs).unref()),
    clearTimer: options.clearTimer ?? ((handle) => clearTimeout(handle as NodeJS.Timeout)),
    stored,
    maintenanceOf,
    windows,
    hub: undefined,
    timer: undefined,
    states,
    savedStates: file.checkedStates,
  };
  if (file.clampedCount > 0) {
    options.onClamped?.(file.clampedCount);
    // written back now, so the next start does not find (and report) the same times again
    persist(book, stored);
  }
  return {
    silencing: (alert) => silencingIds(all(book), alert, nowMs()),
    list: () => viewsOf(all(book), nowMs()),
    get: (id) => viewsOf(all(book), nowMs()).find((view) => view.id === id),
    put: (input) => put(book, input),
    expire: (id) => expire(book, id),
    merge: (silence) => merge(book, silence),
    start(hub) {
      book.hub = hub;
      check(book);
    },
    setMaintenance(maintenance) {
      book.maintenanceOf = maintenance;
      check(book);
    },
    stop() {
      if (book.timer !== undefined) book.clearTimer(book.timer);
      book.timer = undefined;
      book.hub = undefined;
    },
  };
}

/** Stored silences and windows together. */
function all(book: Book): readonly Silence[] {
  return book.windows.length === 0 ? book.stored : [...book.stored, ...book.windows];
}

/**
 * Write `silences` and the states of the last check (atomically, before any answer) and hold them; false (logged)
 * when the disk refused.
 */
function persist(book: Book, silences: readonly Silence[], states = book.states): boolean {
  try {
    writeSilences(book.options.path, silences, states);
  } catch (error) {
    book.options.logger.error({ err: error, path: book.options.path }, "could not write the silences file");
    return false;
  }
  book.stored = silences;
  book.states = states;
  book.savedStates = new Map(states);
  return true;
}

/** The answer when the silences file cannot be written: nothing changed. */
const NOT_SAVED: SilenceRefusal = {
  status: 503,
  error: "state_unwritable",
  message: "the silence could not be saved in state.dir (see the daemon's log); nothing changed",
};

/** Create or update a silence: persist, announce, re-check muting. */
function put(book: Book, input: SilenceInput): SilenceChange | SilenceRefusal {
  if (input.id !== undefined && isMaintenanceSilenceId(input.id)) return maintenanceRefusal(input.id);
  const { nowMs, newId } = book.options;
  const change = putSilence(book.stored, input, nowMs(), newId ?? randomUUID);
  if (!("silences" in change)) return change;
  const states = new Map(book.states).set(change.silence.id, silenceState(change.silence, nowMs()));
  if (change.replaced !== undefined) states.set(change.replaced.id, "expired");
  if (!persist(book, change.silences, states)) return NOT_SAVED;
  if (change.replaced !== undefined) book.options.onStored?.(change.replaced);
  book.options.onStored?.(change.silence);
  if (change.replaced !== undefined) announce(book.hub, "silence_expired", change.replaced, "replaced");
  announce(book.hub, "silence_created", change.silence, input.id === undefined ? "created" : "updated");
  check(book);
  return change;
}

/** Expire a stored silence now: persist, announce, re-check muting. */
function expire(book: Book, id: string): SilenceChange | SilenceRefusal {
  if (isMaintenanceSilenceId(id)) return maintenanceRefusal(id);
  const change = expireSilence(book.stored, id, book.options.nowMs());
  if (!("silences" in change)) return change;
  if (!persist(book, change.silences, new Map(book.states).set(id, "expired"))) return NOT_SAVED;
  book.options.onStored?.(change.silence);
  announce(book.hub, "silence_expired", change.silence, "expired");
  check(book);
  return change;
}

/** Take another daemon's version of a silence when it wins over the one held (compareSilenceVersions); nothing is announced. */
function merge(book: Book, silence: Silence): boolean {
  if (isMaintenanceSilenceId(silence.id)) return false;
  const held = book.stored.find((s) => s.id === silence.id);
  if (held !== undefined && compareSilenceVersions(silence, held) <= 0) return false;
  const nowMs = book.options.nowMs();
  const silences =
    held === undefined
      ? [...book.stored, silence]
      : book.stored.map((s) => (s.id === silence.id ? silence : s));
  const pruned = pruneSilences(silences, nowMs);
  if (!pruned.some((s) => s.id === silence.id)) return false;
  // its state now is what its maker announced: no announcement here, and none later for the same state
  const states = new Map(book.states).set(silence.id, silenceState(silence, nowMs));
  // the file is this member's copy: muting follows the shared set even when the disk refuses
  if (!persist(book, pruned, states)) {
    book.stored = pruned;
    book.states = states;
  }
  check(book);
  return true;
}

/** Announce what time changed, forget long-expired silences, re-mute firing alerts, and wait for the next change. */
function check(book: Book): void {
  if (book.timer !== undefined) book.clearTimer(book.timer);
  book.timer = undefined;
  const { hub } = book;
  if (hub === undefined) return;
  const now = book.options.nowMs();
  book.windows = book.maintenanceOf(now);
  const current = [...book.stored, ...book.windows];
  announceStateChanges(hub, book.states, current, now, book.options.announceOnce);
  const pruned = pruneSilences(book.stored, now);
  book.states = statesOf([...pruned, ...book.windows], now);
  if (pruned !== book.stored || !sameStates(book.states, book.savedStates)) persist(book, pruned);
  remute(hub, all(book), now, book.options.remuteScope?.() ?? (() => true));
  const next = nextSilenceChangeMs(current, now);
  const delayMs = Math.min(MAX_CHECK_DELAY_MS, next === null ? MAX_CHECK_DELAY_MS : next - now);
  book.timer = book.setTimer(() => check(book), Math.max(0, delayMs));
}

/** Re-announce each firing alert whose muting is not what the silences say now (the hub stamps the new one). */
function remute(
  hub: EventHub,
  silences: readonly Silence[],
  nowMs: number,
  inScope: (alert: AlertPayload) => boolean,
): void {
  for (const alert of hub.activeAlerts()) {
    if (!inScope(alert)) continue;
    if (sameStrings(alert.silencedBy ?? [], silencingIds(silences, alert, nowMs))) continue;
    hub.publishAlert({ ...alert, reason: "repeat" });
  }
}

/** Lifecycle events for silences whose state changed by time since the last check (windows start, silences end). */
function announceStateChanges(
  hub: EventHub,
  before: ReadonlyMap<string, SilenceState>,
  silences: readonly Silence[],
  nowMs: number,
  announceOnce: (claim: string, announce: () => void) => void = (_claim, run) => run(),
): void {
  for (const silence of silences) {
    const was = before.get(silence.id);
    const now = silenceState(silence, nowMs);
    if (was === now) continue;
    const change = timeChange(silence, was, now);
    if (change === null) continue;
    const [phase, cause] = change;
    announceOnce(silenceClaim(silence, cause), () => announce(hub, phase, silence, cause));
  }
}

/** The lifecycle event a change of state by time makes, if any. */
function timeChange(
  silence: Silence,
  was: SilenceState | undefined,
  now: SilenceState,
): readonly ["silence_created" | "silence_expired", string] | null {
  if (!isMaintenanceSilenceId(silence.id))
    return now === "expired" && was !== undefined ? ["silence_expired", "ended"] : null;
  if (now === "active") return ["silence_created", "window_started"];
  // a window's occurrence ended: the silence now shows the next one (pending), or none is left (expired)
  return was === "active" ? ["silence_expired", "window_ended"] : null;
}

/**
 * What names one change by time across daemons: the silence, the change, and the time it is about (the end of a
 * silence or of a window's occurrence, the start of an occurrence), so every daemon seeing it names it alike.
 */
export function silenceClaim(silence: Silence, cause: string): string {
  const at = cause === "window_started" ? silence.startsAt : silence.endsAt;
  return `${cause}:${silence.id}:${Date.parse(at)}`;
}

/** Journal and publish one silence lifecycle event. */
function announce(
  hub: EventHub | undefined,
  phase: "silence_created" | "silence_expired",
  silence: Silence,
  cause: string,
): void {
  hub?.publishLifecycle(phase, {
    id: silence.id,
    cause,
    matchers: formatMatchers(silence.matchers),
    startsAt: silence.startsAt,
    endsAt: silence.endsAt,
    createdBy: silence.createdBy,
    comment: silence.comment,
  });
}

/** Whether two state maps say the same of the same ids. */
function sameStates(
  a: ReadonlyMap<string, SilenceState>,
  b: ReadonlyMap<string, SilenceState> | undefined,
): boolean {
  if (b === undefined || a.size !== b.size) return false;
  for (const [id, state] of a) if (b.get(id) !== state) return false;
  return true;
}

/** Each silence's state at `nowMs`, by id. */
function statesOf(silences: readonly Silence[], nowMs: number): Map<string, SilenceState> {
  return new Map(silences.map((silence) => [silence.id, silenceState(silence, nowMs)]));
}

/** Silences with their state: active, then pending, then expired; each newest first. */
function viewsOf(silences: readonly Silence[], nowMs: number): readonly SilenceView[] {
  const rank: Readonly<Record<SilenceState, number>> = { active: 0, pending: 1, expired: 2 };
  return silences
    .map((silence) => ({ ...silence, status: { state: silenceState(silence, nowMs) } }))
    .sort(
      (a, b) =>
        rank[a.status.state] - rank[b.status.state] || Date.parse(b.updatedAt) - Date.parse(a.updatedAt),
    );
}

function maintenanceRefusal(id: string): SilenceRefusal {
  return {
    status: 409,
    error: "maintenance_window",
    message: `${id} is a maintenance window from the config: change it there and reload`,
  };
}
