// Resume bookkeeping of the page's WebSocket session (docs/websocket.md, "Resuming without false gaps"): what to send
// when a connection opens, how far the page is covered, and what each journaled event or gap means (pure).
import type { ClientMessage, ServerFrame } from "./types.js";

/** Every channel: alerts and lifecycle for state and history, prices for values and sparklines. */
export const CHANNELS = ["alerts", "prices", "lifecycle"] as const;

/** Journaled events the first load asks to replay, for the history timeline. */
export const HISTORY_EVENTS = 200;

/** Request ids of the page's subscribes: an error answering one of them means the session must start over. */
export const INITIAL_ID = "initial";
/** The id of a reconnect's subscribe with `since`. */
export const RESUME_ID = "resume";
/** The id of a fresh page's first snapshot (a later one is a refresh). */
export const SNAPSHOT_ID = "snapshot";

/** What the page knows to resume without gaps or duplicates. */
export interface ResumeState {
  /**
   * The resume point: every event matching the filter up to this seq has been received (the highest seq of an
   * event, heartbeat or pong after the subscribe was answered). Null before the first subscribe was answered.
   */
  readonly point: number | null;
  /** The subscribe of this connection: its `since`, and whether it resumes (a gap then loses events). */
  readonly subscribe: { readonly since: number; readonly mode: "initial" | "resume" } | null;
  /** Whether this connection's subscribe was answered (a heartbeat before that covers no filter). */
  readonly answered: boolean;
}

/** A page that has received nothing yet. */
export const FRESH_RESUME: ResumeState = { point: null, subscribe: null, answered: false };

/** What the page does with a frame. */
export type Verdict =
  /** a journaled event not seen before: apply it */
  | "new"
  /** a journaled event already applied: drop it */
  | "duplicate"
  /** the first load's history window reaches past the journal: shorter history, nothing lost */
  | "history-truncated"
  /** events were lost or the daemon's journal went back: drop everything and load again */
  | "reload"
  /** nothing to apply (replies, heartbeats, prices: the caller handles them by type) */
  | "none";

/** The step to take: the next state, a message to send (or none), and whether to start over. */
export interface ResumeStep {
  readonly state: ResumeState;
  readonly send: ClientMessage | null;
  readonly reload: boolean;
}

/**
 * A connection said hello with the journal's last seq. A fresh page asks for a snapshot first (prices and the
 * seq to replay history from); a page with a resume point subscribes with `since` at once. A journal whose last
 * seq is behind the point was wiped (a new state directory): what the page holds no longer matches, reload.
 */
export function onHello(state: ResumeState, helloSeq: number): ResumeStep {
  const reset = { ...state, subscribe: null, answered: false };
  if (state.point === null) return { state: reset, send: { op: "snapshot", id: SNAPSHOT_ID }, reload: false };
  if (helloSeq < state.point) return { state: FRESH_RESUME, send: null, reload: true };
  const since = state.point;
  return {
    state: { ...reset, subscribe: { since, mode: "resume" } },
    send: { op: "subscribe", id: RESUME_ID, channels: CHANNELS, since },
    reload: false,
  };
}

/** The first snapshot answered (at `seq`): subscribe, replaying up to HISTORY_EVENTS before it for the timeline. */
export function onFirstSnapshot(state: ResumeState, seq: number): ResumeStep {
  if (state.point !== null || state.subscribe !== null) return { state, send: null, reload: false };
  const since = Math.max(0, seq - HISTORY_EVENTS);
  return {
    state: { ...state, subscribe: { since, mode: "initial" } },
    send: { op: "subscribe", id: INITIAL_ID, channels: CHANNELS, since },
    reload: false,
  };
}

/** Classify one frame and advance the resume point. */
export function noteFrame(state: ResumeState, frame: ServerFrame): { state: ResumeState; verdict: Verdict } {
  switch (frame.type) {
    case "subscribed": {
      // with since, the replay follows the reply: covered up to `since` until its events arrive
      const point = state.subscribe?.since ?? frame.seq;
      return {
        state: { ...state, answered: true, point: Math.max(point, state.point ?? 0) },
        verdict: "none",
      };
    }
    case "alert":
    case "lifecycle":
      if (state.point !== null && frame.seq <= state.point) return { state, verdict: "duplicate" };
      return { state: { ...state, point: frame.seq }, verdict: "new" };
    case "heartbeat":
    case "pong":
      if (!state.answered || state.point === null || frame.seq <= state.point)
        return { state, verdict: "none" };
      return { state: { ...state, point: frame.seq }, verdict: "none" };
    case "gap":
      return { state, verdict: state.subscribe?.mode === "initial" ? "history-truncated" : "reload" };
    case "error":
      // a refused subscribe (since too old to resume exactly, or beyond a wiped journal): start over
      return { state, verdict: frame.id === RESUME_ID || frame.id === INITIAL_ID ? "reload" : "none" };
    case "hello":
    case "snapshot":
    case "price":
      return { state, verdict: "none" };
  }
}

/** A connection closed: the point stays (the next connection resumes from it), the subscribe is gone with it. */
export function onClose(state: ResumeState): ResumeState {
  return { ...state, subscribe: null, answered: false };
}
