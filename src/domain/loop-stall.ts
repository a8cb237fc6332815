// The daemon's own stall, as a pure decision: when was the event loop blocked, and must data-age verdicts wait.
//
// Why: a blocked loop (a request flood, a long GC, a suspended VM) runs no polls and no timers, so when it
// resumes every price looks old, every poll in flight has timed out and the engine would blame the upstream
// (false critical stale_price / publisher_stale / upstream_error, issue 15 §1). The loop is sampled at least
// every `sampleIntervalMs` while it runs (a timer, plus the pipeline before each evaluation); a gap between two
// samples longer than `sampleIntervalMs + thresholdMs` can only mean the loop did not run. From then until
// `holdMs` after the last such gap, the pipeline holds its verdict: no time-driven evaluation (stale ages
// would count the stall) and failed polls are not counted (they overlapped the stall: a poll cannot outlive
// `holdMs` = the whole-poll deadline). The daemon raises `monitor_stalled` instead, and resolves it when the
// hold ends with the loop running on time.

/** Tuning of the stall decision (all in ms). */
export interface LoopStallSettings {
  /** The loop is sampled at least this often while it runs. */
  readonly sampleIntervalMs: number;
  /** Lag (beyond the sample interval) that counts as a stall. */
  readonly thresholdMs: number;
  /** How long after a stall verdicts stay held (covers every poll that overlapped it). */
  readonly holdMs: number;
}

/** What is known about the loop's recent stalls. */
export interface LoopStallState {
  /** Time of the latest sample. */
  readonly lastSampleMs: number;
  /** Start of the stall episode in progress (null = none): the `monitor_stalled` alert is firing. */
  readonly stalledSinceMs: number | null;
  /** Verdicts are held until this time. */
  readonly holdUntilMs: number;
  /** Longest lag of the episode in progress (0 when none). */
  readonly maxLagMs: number;
}

/** What one sample found: a new stall episode, its end, a further stall inside an episode, or nothing. */
export type LoopStallEvent =
  | { readonly kind: "stalled"; readonly lagMs: number; readonly sinceMs: number }
  | { readonly kind: "stalled_again"; readonly lagMs: number }
  | { readonly kind: "recovered"; readonly sinceMs: number; readonly maxLagMs: number }
  | { readonly kind: "on_time"; readonly lagMs: number };

/** A state with no stall, first sampled at `nowMs`. */
export function initialLoopStallState(nowMs: number): LoopStallState {
  return { lastSampleMs: nowMs, stalledSinceMs: null, holdUntilMs: nowMs, maxLagMs: 0 };
}

/** Record a sample taken at `nowMs`: the new state and what it means. */
export function sampleLoop(
  state: LoopStallState,
  nowMs: number,
  settings: LoopStallSettings,
): { readonly state: LoopStallState; readonly event: LoopStallEvent } {
  // samples from several callers may arrive out of order by a few ms: never move backwards
  const lagMs = Math.max(0, nowMs - state.lastSampleMs - settings.sampleIntervalMs);
  const lastSampleMs = Math.max(state.lastSampleMs, nowMs);
  if (lagMs > settings.thresholdMs) {
    const holdUntilMs = Math.max(state.holdUntilMs, nowMs + settings.holdMs);
    const maxLagMs = Math.max(state.maxLagMs, lagMs);
    if (state.stalledSinceMs !== null)
      return {
        state: { lastSampleMs, stalledSinceMs: state.stalledSinceMs, holdUntilMs, maxLagMs },
        event: { kind: "stalled_again", lagMs },
      };
    const sinceMs = state.lastSampleMs + settings.sampleIntervalMs;
    return {
      state: { lastSampleMs, stalledSinceMs: sinceMs, holdUntilMs, maxLagMs },
      event: { kind: "stalled", lagMs, sinceMs },
    };
  }
  if (state.stalledSinceMs !== null && nowMs >= state.holdUntilMs)
    return {
      state: { lastSampleMs, stalledSinceMs: null, holdUntilMs: state.holdUntilMs, maxLagMs: 0 },
      event: { kind: "recovered", sinceMs: state.stalledSinceMs, maxLagMs: state.maxLagMs },
    };
  return { state: { ...state, lastSampleMs }, event: { kind: "on_time", lagMs } };
}

/**
 * The state after a sample at `nowMs` when that sample is on time and no stall episode is in progress (what
 * sampleLoop returns then, without its event: one object, for the pipeline's sample before each evaluation); null
 * when the sample means more (call sampleLoop).
 */
export function quietSample(
  state: LoopStallState,
  nowMs: number,
  settings: LoopStallSettings,
): LoopStallState | null {
  if (
    state.stalledSinceMs !== null ||
    nowMs - state.lastSampleMs - settings.sampleIntervalMs > settings.thresholdMs
  )
    return null;
  // the polls of one wake-up mostly end within the same millisecond: the state stands, no copy per poll
  if (nowMs <= state.lastSampleMs) return state;
  return { ...state, lastSampleMs: nowMs };
}

/** True while verdicts that depend on elapsed time or on failed polls must wait (see the module comment). */
export function holdsVerdict(state: LoopStallState, nowMs: number): boolean {
  return nowMs < state.holdUntilMs;
}
