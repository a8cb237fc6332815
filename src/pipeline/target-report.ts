// What the operator API reads about each running target: the pipeline's latest poll joined with the monitor's data view.
import type { PmError } from "../domain/errors.js";
import type { TargetDataView } from "../domain/monitor.js";
import type { TargetSpec } from "../domain/types.js";

/** The latest poll of a target as the runner saw it (wall clock). */
export interface LastPoll {
  readonly endedAtMs: number;
  readonly durationMs: number;
  readonly ok: boolean;
  readonly consecutiveFailures: number;
  readonly error: PmError | null;
}

/** One running target: its spec and period, latest poll, when the next is due, and what its data says. */
export interface TargetReport {
  readonly spec: TargetSpec;
  readonly periodMs: number;
  readonly lastPoll: LastPoll | null;
  /** Wall-clock time the next poll is due; null before the first poll, while failing (backoff) and while streamed. */
  readonly nextPollAtMs: number | null;
  /** Null until the monitor has seen a poll of it. */
  readonly data: TargetDataView | null;
  /** Age of the data at the market clock's now (negative when the upstream's clock runs ahead); null without data. */
  readonly ageMs: number | null;
}

/** What the runner writes per poll of a target (plain fields, no allocation); `lastPollAtMs` is NaN before one. */
export interface PollFields {
  readonly lastPollAtMs: number;
  readonly lastPollDurationMs: number;
  readonly lastError: PmError | null;
  readonly failures: number;
}

/** A target's latest poll as the API reads it; null before the first one ended. */
export function lastPollOf(fields: PollFields): LastPoll | null {
  if (Number.isNaN(fields.lastPollAtMs)) return null;
  return {
    endedAtMs: fields.lastPollAtMs,
    durationMs: fields.lastPollDurationMs,
    ok: fields.lastError === null,
    consecutiveFailures: fields.failures,
    error: fields.lastError,
  };
}

/** A running target's pipeline-side facts. */
export interface RunningTargetFacts {
  readonly spec: TargetSpec;
  readonly periodMs: number;
  readonly lastPoll: LastPoll | null;
  /** Its prices come from the SSE stream now: no poll of it is due (a component poll, if any, is not scheduled by the stream). */
  readonly streaming: boolean;
}

/** What the runner writes per streamed event of a target in stream mode (wall clock; NaN before one). */
export interface StreamFields {
  readonly mode: "stream" | "poll";
  readonly lastEventAtMs: number;
}

/**
 * A target's facts as the API reads them. Polled (or a streamed one fallen back to polls): its latest poll.
 * Streaming: the later of its latest streamed price (a delivery that took no time and failed nothing) and its
 * latest (component) poll, and no next poll.
 */
export function targetFacts(
  spec: TargetSpec,
  periodMs: number,
  poll: PollFields,
  streamed: StreamFields | null,
): RunningTargetFacts {
  const lastPoll = lastPollOf(poll);
  if (streamed?.mode !== "stream") return { spec, periodMs, lastPoll, streaming: false };
  const atMs = streamed.lastEventAtMs;
  const event: LastPoll | null = Number.isNaN(atMs)
    ? null
    : { endedAtMs: atMs, durationMs: 0, ok: true, consecutiveFailures: 0, error: null };
  const latest =
    lastPoll === null || (event !== null && event.endedAtMs >= lastPoll.endedAtMs) ? event : lastPoll;
  return { spec, periodMs, lastPoll: latest, streaming: true };
}

/**
 * When the next poll of a target is due: polls are phase-locked, so one period after the latest one started
 * (a poll longer than its period is followed at once); unknown before the first and after a failure (the
 * backoff is random).
 */
export function nextPollDueMs(lastPoll: LastPoll | null, periodMs: number): number | null {
  if (lastPoll === null || !lastPoll.ok) return null;
  const startedAtMs = lastPoll.endedAtMs - lastPoll.durationMs;
  return Math.max(startedAtMs + periodMs, lastPoll.endedAtMs);
}

/** Join the running targets with the monitor's data views (by target id), sorted by id. */
export function joinTargetReports(
  running: readonly RunningTargetFacts[],
  views: readonly TargetDataView[],
  marketNowMs: number,
): readonly TargetReport[] {
  const byId = new Map(views.map((view) => [view.spec.id, view]));
  return running
    .map((target): TargetReport => {
      const data = byId.get(target.spec.id) ?? null;
      const dataAtMs = data?.dataAtMs ?? null;
      return {
        spec: target.spec,
        periodMs: target.periodMs,
        lastPoll: target.lastPoll,
        nextPollAtMs: target.streaming ? null : nextPollDueMs(target.lastPoll, target.periodMs),
        data,
        ageMs: dataAtMs === null ? null : marketNowMs - dataAtMs,
      };
    })
    .sort((a, b) => (a.spec.id < b.spec.id ? -1 : a.spec.id > b.spec.id ? 1 : 0));
}
