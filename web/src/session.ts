// One WebSocket frame through the resume bookkeeping into the page state: what changes, what to send, what to read
// and whether to start over (pure: the tests replay whole sessions, reconnects and gaps included, without a browser).
import {
  FRESH_RESUME,
  noteFrame,
  onClose,
  onFirstSnapshot,
  onHello,
  SNAPSHOT_ID,
  type ResumeState,
} from "./resume.js";
import {
  applyConnection,
  applyEvent,
  applyHistoryGap,
  applyReply,
  applyTick,
  INITIAL_STATE,
  type Change,
  type PageState,
  type Resource,
} from "./store.js";
import type { ClientMessage, ServerFrame } from "./types.js";

/** The id of the snapshots asked for after a lifecycle event (the first one uses SNAPSHOT_ID). */
export const REFRESH_ID = "refresh";

/** The page state with the bookkeeping of its stream. */
export interface Session {
  readonly page: PageState;
  readonly resume: ResumeState;
  /** A refresh snapshot is in flight (another is not asked for until it answers). */
  readonly refreshing: boolean;
}

/** What one frame leads to. */
export interface Step {
  readonly session: Session;
  /** Messages to send on the same socket, in order. */
  readonly messages: readonly ClientMessage[];
  /** API reads to make (the shell coalesces repeated ones). */
  readonly reads: readonly Resource[];
  /** Events were lost (or the journal went back): the shell starts a new connection with `reloadSession`. */
  readonly reload: boolean;
}

/** A page that has received nothing yet. */
export const FRESH_SESSION: Session = { page: INITIAL_STATE, resume: FRESH_RESUME, refreshing: false };

const only = (session: Session, messages: readonly ClientMessage[] = []): Step => ({
  session,
  messages,
  reads: [],
  reload: false,
});

/** Fold a state change into a step: reads as asked, one refresh snapshot at a time. */
function changed(session: Session, change: Change, messages: readonly ClientMessage[] = []): Step {
  const reads: Resource[] = [];
  const out = [...messages];
  let refreshing = session.refreshing;
  for (const effect of change.effects) {
    if (effect.kind === "read") {
      if (!reads.includes(effect.resource)) reads.push(effect.resource);
    } else if (!refreshing) {
      refreshing = true;
      out.push({ op: "snapshot", id: REFRESH_ID });
    }
  }
  return { session: { ...session, page: change.state, refreshing }, messages: out, reads, reload: false };
}

/** Apply one frame received at `browserNowMs`. */
export function stepFrame(session: Session, frame: ServerFrame, browserNowMs: number): Step {
  switch (frame.type) {
    case "hello": {
      const hello = onHello(session.resume, frame.seq);
      const next = { ...session, resume: hello.state, refreshing: false };
      if (hello.reload) return { ...only(next), reload: true };
      return only(next, hello.send === null ? [] : [hello.send]);
    }
    case "snapshot": {
      const first =
        frame.id === SNAPSHOT_ID && session.resume.point === null && session.resume.subscribe === null;
      const refreshed = { ...session, refreshing: frame.id === REFRESH_ID ? false : session.refreshing };
      const step = changed(refreshed, applyReply(session.page, frame, "refresh", browserNowMs));
      if (!first) return step;
      const subscribe = onFirstSnapshot(session.resume, frame.seq);
      const messages = subscribe.send === null ? step.messages : [...step.messages, subscribe.send];
      return { ...step, session: { ...step.session, resume: subscribe.state }, messages };
    }
    case "subscribed": {
      const mode = session.resume.subscribe?.mode ?? "resume";
      const resume = noteFrame(session.resume, frame).state;
      return changed({ ...session, resume }, applyReply(session.page, frame, mode, browserNowMs));
    }
    case "price":
      return only({ ...session, page: applyTick(session.page, frame.tick, browserNowMs) });
    case "alert":
    case "lifecycle":
    case "gap":
    case "heartbeat":
    case "pong":
    case "error":
      return journalFrame(session, frame);
  }
}

/** Events, gaps, heartbeats, pongs and errors: through the resume bookkeeping. */
function journalFrame(session: Session, frame: ServerFrame): Step {
  const { state: resume, verdict } = noteFrame(session.resume, frame);
  const next = { ...session, resume };
  if (verdict === "reload") return { ...only(next), reload: true };
  if (verdict === "history-truncated" && frame.type === "gap")
    return only({ ...next, page: applyHistoryGap(next.page, frame.to) });
  if (verdict === "new" && (frame.type === "alert" || frame.type === "lifecycle"))
    return changed(next, applyEvent(next.page, frame));
  return only(next);
}

/** The socket closed: the resume point stays for the next connection; the page shows its last known state. */
export function closeSession(session: Session, opened: boolean): Session {
  const connection = session.page.connection === "connecting" && !opened ? "connecting" : "reconnecting";
  return {
    page: applyConnection(session.page, connection),
    resume: onClose(session.resume),
    refreshing: false,
  };
}

/** Start over after a gap: the stream's state goes (it is replayed afresh), what the API reads gave stays until re-read. */
export function reloadSession(session: Session): Session {
  const { targets, targetsReadAtMs, status, silences } = session.page;
  return { ...FRESH_SESSION, page: { ...INITIAL_STATE, targets, targetsReadAtMs, status, silences } };
}
