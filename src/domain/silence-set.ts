// The set of silences as a value: create (or update), expire early, and forget long-expired ones, as Alertmanager does.
import { sameMatchers, silenceProblem, silenceState, type Silence, type SilenceMatcher } from "./silence.js";

/** What a person posts (Alertmanager's `postableSilence`): `id` names a silence to update. */
export interface SilenceInput {
  readonly id?: string;
  readonly matchers: readonly SilenceMatcher[];
  readonly startsAt: string;
  readonly endsAt: string;
  readonly createdBy: string;
  readonly comment: string;
}

/** Bounds that keep the set (and its file) small whatever a client posts. */
export const SILENCE_LIMITS = {
  /** Silences not yet expired; one more is refused. */
  maxLive: 1_000,
  /** Expired silences kept for the API and the status page, newest first. */
  maxExpired: 1_000,
  /** How long an expired silence stays listed (Alertmanager's default retention, 120 h). */
  retentionMs: 120 * 3_600_000,
} as const;

/** A refused change: `status` is the HTTP status the API answers with. */
export interface SilenceRefusal {
  readonly status: 400 | 404 | 409 | 429 | 503;
  readonly error: string;
  readonly message: string;
}

/** A change that went through: the new set and the silence it created, updated or expired. */
export interface SilenceChange {
  readonly silences: readonly Silence[];
  readonly silence: Silence;
  /** The silence an update replaced (expired), when the update could not be made in place. */
  readonly replaced?: Silence;
}

/**
 * Create a silence, or update the one `input.id` names. As in Alertmanager: a start in the past becomes now;
 * an update of a live silence with the same matchers changes it in place (an active one keeps its start);
 * any other update expires the old silence and creates a new one.
 */
export function putSilence(
  silences: readonly Silence[],
  input: SilenceInput,
  nowMs: number,
  newId: () => string,
): SilenceChange | SilenceRefusal {
  const now = new Date(nowMs).toISOString();
  const startsAt = Date.parse(input.startsAt) < nowMs ? now : input.startsAt;
  const problem = silenceProblem({ ...input, startsAt });
  if (problem !== null) return { status: 400, error: "invalid_silence", message: problem };
  if (Date.parse(input.endsAt) <= nowMs)
    return { status: 400, error: "invalid_silence", message: "endsAt: must be in the future" };
  const existing = input.id === undefined ? undefined : silences.find((s) => s.id === input.id);
  if (input.id !== undefined && existing === undefined)
    return { status: 404, error: "not_found", message: `no silence ${input.id}` };
  const fields = {
    matchers: input.matchers,
    endsAt: input.endsAt,
    createdBy: input.createdBy,
    comment: input.comment,
  };
  if (
    existing !== undefined &&
    silenceState(existing, nowMs) !== "expired" &&
    sameMatchers(existing.matchers, input.matchers)
  ) {
    const kept = silenceState(existing, nowMs) === "active" ? existing.startsAt : startsAt;
    const silence: Silence = {
      ...existing,
      ...fields,
      startsAt: kept,
      updatedAt: updatedAfter(existing, nowMs),
    };
    return { silences: silences.map((s) => (s.id === silence.id ? silence : s)), silence };
  }
  const live = silences.filter((s) => silenceState(s, nowMs) !== "expired" && s.id !== existing?.id).length;
  if (live >= SILENCE_LIMITS.maxLive)
    return {
      status: 429,
      error: "too_many_silences",
      message: `at most ${SILENCE_LIMITS.maxLive} silences may be active or pending; expire some first`,
    };
  const silence: Silence = {
    id: newId(),
    matchers: input.matchers,
    startsAt,
    ...ends(input),
    updatedAt: now,
  };
  if (existing === undefined) return { silences: [...silences, silence], silence };
  const replaced = endNow(existing, nowMs);
  return {
    silences: [...silences.map((s) => (s.id === existing.id ? replaced : s)), silence],
    silence,
    ...(replaced === existing ? {} : { replaced }),
  };
}

/** Expire the silence `id` now (Alertmanager's DELETE): a pending one ends before it starts. */
export function expireSilence(
  silences: readonly Silence[],
  id: string,
  nowMs: number,
): SilenceChange | SilenceRefusal {
  const existing = silences.find((s) => s.id === id);
  if (existing === undefined) return { status: 404, error: "not_found", message: `no silence ${id}` };
  if (silenceState(existing, nowMs) === "expired")
    return { status: 409, error: "already_expired", message: `silence ${id} has already expired` };
  const silence = endNow(existing, nowMs);
  return { silences: silences.map((s) => (s.id === id ? silence : s)), silence };
}

/** Drop silences expired longer than the retention, and the oldest expired beyond `maxExpired`. */
export function pruneSilences(silences: readonly Silence[], nowMs: number): readonly Silence[] {
  const expired = silences
    .filter(
      (s) =>
        silenceState(s, nowMs) === "expired" && nowMs - Date.parse(s.endsAt) < SILENCE_LIMITS.retentionMs,
    )
    .sort((a, b) => Date.parse(b.endsAt) - Date.parse(a.endsAt))
    .slice(0, SILENCE_LIMITS.maxExpired);
  const keep = new Set(expired.map((s) => s.id));
  const pruned = silences.filter((s) => silenceState(s, nowMs) !== "expired" || keep.has(s.id));
  return pruned.length === silences.length ? silences : pruned;
}

/** `silence` ending now (a pending one also starts now, so it never was active); unchanged when already over. */
function endNow(silence: Silence, nowMs: number): Silence {
  const state = silenceState(silence, nowMs);
  if (state === "expired") return silence;
  const now = new Date(nowMs).toISOString();
  return {
    ...silence,
    ...(state === "pending" ? { startsAt: now } : {}),
    endsAt: now,
    updatedAt: updatedAfter(silence, nowMs),
  };
}

/**
 * A new version's `updatedAt`: now, or 1 ms past the version it replaces when that one is as recent. Members keep the
 * newer version of a silence by this time, so a put and an expire within one millisecond must not tie (the expiry
 * would be refused as not newer, and the members keep the active version).
 */
function updatedAfter(previous: Silence, nowMs: number): string {
  return new Date(Math.max(nowMs, Date.parse(previous.updatedAt) + 1)).toISOString();
}

/**
 * Which of two versions of one silence every cluster member keeps: the later `updatedAt`; on a tie (two members
 * changed it in the same millisecond), the version whose canonical text sorts last. Every member computes the same
 * winner whatever order the versions reach it in, so the members converge. Positive when `a` wins, negative when
 * `b` wins, 0 when they are the same version.
 */
export function compareSilenceVersions(a: Silence, b: Silence): number {
  const timeA = updatedAtMs(a);
  const timeB = updatedAtMs(b);
  if (timeA !== timeB) return timeA > timeB ? 1 : -1;
  const textA = canonicalSilenceText(a);
  const textB = canonicalSilenceText(b);
  // code-unit order (not localeCompare): the same on every member whatever its locale
  if (textA === textB) return 0;
  return textA > textB ? 1 : -1;
}

/**
 * A version's `updatedAt` in ms; an unparsable one (NaN, which compares unequal and neither greater nor less) is the
 * oldest time there is, so such a version loses to every dated one on every member and two of them tie-break by text.
 */
function updatedAtMs(silence: Silence): number {
  const ms = Date.parse(silence.updatedAt);
  return Number.isNaN(ms) ? -Infinity : ms;
}

/** A silence as text that does not depend on its objects' key order: every field, in a fixed order. */
function canonicalSilenceText(silence: Silence): string {
  return JSON.stringify([
    silence.id,
    silence.matchers.map((m) => [m.name, m.value, m.isRegex, m.isEqual]),
    silence.startsAt,
    silence.endsAt,
    silence.createdBy,
    silence.comment,
    silence.updatedAt,
  ]);
}

/**
 * How far ahead of this daemon's clock a silence's `updatedAt` may be: 5 min, more than members' clocks should ever
 * differ by. A time further ahead (a hand-edited file, a member whose clock ran ahead) would make every later version
 * of the silence land 1 ms past it (updatedAfter) until the clock catches up. A daemon running alone clamps such a
 * time from its silences file to now (readSilences: the silence is its own and otherwise valid, and dropping it would
 * unmute what it mutes). A cluster member clamps nothing, only logs it from its file: the other members may hold
 * that version, and a lower `updatedAt` here would make them ignore this member's next change of it; and it takes
 * another member's version as it is (silence-sync: clamping or refusing it by this member's clock would make members
 * order one silence's versions differently, and one whose clock is behind would undo newer changes).
 */
export const MAX_UPDATED_AT_AHEAD_MS = 5 * 60_000;

/** Whether `silence` was updated further ahead of `nowMs` than MAX_UPDATED_AT_AHEAD_MS allows. */
export function updatedInFuture(silence: Pick<Silence, "updatedAt">, nowMs: number): boolean {
  return Date.parse(silence.updatedAt) > nowMs + MAX_UPDATED_AT_AHEAD_MS;
}

/** The fields after `startsAt`, in the order Alertmanager lists them. */
function ends(input: SilenceInput): Pick<Silence, "endsAt" | "createdBy" | "comment"> {
  return { endsAt: input.endsAt, createdBy: input.createdBy, comment: input.comment };
}
