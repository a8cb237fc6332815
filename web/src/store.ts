// The page's state and how each WebSocket frame and API answer changes it (pure: the tests drive it with frames).
import type { SeriesPoint } from "./sparkline.js";
import type {
  AlertPayload,
  JournaledEvent,
  PriceTick,
  ServerFrame,
  Silence,
  StatusView,
  TargetView,
} from "./types.js";

/** The API reads the page makes once at load and again only when an event says they changed. */
export type Resource = "targets" | "status" | "silences";
/** Every resource, in the order a first load reads them. */
export const RESOURCES: readonly Resource[] = ["targets", "status", "silences"];

/** How the WebSocket session stands. */
export type Connection = "connecting" | "live" | "reconnecting" | "unauthorized";

/** A target's live series: recent points for the sparkline and the latest tick. */
export interface Series {
  readonly points: readonly SeriesPoint[];
  readonly latest: PriceTick | null;
  /** When the latest tick was received, on the daemon's clock (its `observedAt`). */
  readonly observedAtMs: number | null;
}

/** Everything the page shows. */
export interface PageState {
  readonly connection: Connection;
  /** The alert map reflects every event up to this seq (the last `subscribed` or `snapshot` reply). */
  readonly baseSeq: number;
  /** Whether journaled events at or before `baseSeq` still change API-read state (after a resume, not a first load). */
  readonly replayRefreshes: boolean;
  /** Firing alerts by fingerprint. */
  readonly alerts: ReadonlyMap<string, AlertPayload>;
  /** Per target id. */
  readonly series: ReadonlyMap<string, Series>;
  /** Journaled events, newest first, at most TIMELINE_MAX. */
  readonly timeline: readonly JournaledEvent[];
  /** First seq the journal still held when the history was replayed (older ones are gone), or null. */
  readonly historyFrom: number | null;
  readonly targets: readonly TargetView[] | null;
  /** When the targets were read, on the daemon's clock (their `ageMs` are as of then). */
  readonly targetsReadAtMs: number | null;
  readonly status: StatusView | null;
  readonly silences: readonly Silence[] | null;
  /** Why the latest read of a resource failed (absent when it worked). */
  readonly readErrors: Readonly<Partial<Record<Resource, string>>>;
  /** Browser clock minus the daemon's (from the latest tick), so ages tick on the daemon's time. */
  readonly clockOffsetMs: number;
}

/** What a change asks the shell to do: read a resource again, or ask the server for a fresh snapshot. */
export type Effect = { readonly kind: "read"; readonly resource: Resource } | { readonly kind: "snapshot" };

/** A new state and the effects to run. */
export interface Change {
  readonly state: PageState;
  readonly effects: readonly Effect[];
}

/** Events the history keeps (the first load replays as many). */
export const TIMELINE_MAX = 200;
/** Points a sparkline keeps (as many as /api/v1/targets gives). */
export const SERIES_MAX = 120;

/** The page before anything arrived. */
export const INITIAL_STATE: PageState = {
  connection: "connecting",
  baseSeq: 0,
  replayRefreshes: false,
  alerts: new Map(),
  series: new Map(),
  timeline: [],
  historyFrom: null,
  targets: null,
  targetsReadAtMs: null,
  status: null,
  silences: null,
  readErrors: {},
  clockOffsetMs: 0,
};

const NO_EFFECTS: readonly Effect[] = [];
const READ_ALL: readonly Effect[] = RESOURCES.map((resource) => ({ kind: "read", resource }));
const READ_TARGETS: readonly Effect[] = [{ kind: "read", resource: "targets" }];

/** Which reads (and whether a snapshot) a lifecycle event calls for. */
export function lifecycleEffects(event: string): readonly Effect[] {
  switch (event) {
    // the list changed; the firing alerts it mutes or unmutes come again as alert events with their silencedBy
    case "silence_created":
    case "silence_expired":
      return [{ kind: "read", resource: "silences" }];
    // targets, rules and sinks may have changed: read everything, and the firing alerts as of now
    case "config_reloaded":
      return [...READ_ALL, { kind: "snapshot" }];
    case "started":
      return [{ kind: "read", resource: "status" }];
    default:
      return NO_EFFECTS;
  }
}

const alertMap = (active: readonly AlertPayload[]): ReadonlyMap<string, AlertPayload> =>
  new Map(active.map((alert) => [alert.fingerprint, alert]));

/** Insert into the newest-first timeline, keeping it sorted by seq and bounded. */
function addToTimeline(
  timeline: readonly JournaledEvent[],
  event: JournaledEvent,
): readonly JournaledEvent[] {
  const index = timeline.findIndex((entry) => entry.seq < event.seq);
  const next =
    index === -1 ? [...timeline, event] : [...timeline.slice(0, index), event, ...timeline.slice(index)];
  return next.length > TIMELINE_MAX ? next.slice(0, TIMELINE_MAX) : next;
}

/** A tick into its target's series (a repeated upstream timestamp only refreshes the latest tick). */
export function addTick(series: Series | undefined, tick: PriceTick): Series {
  const atMs = Date.parse(tick.timestamp);
  const value = Number(tick.price);
  const points = series?.points ?? [];
  const last = points.at(-1);
  const grows = Number.isFinite(atMs) && Number.isFinite(value) && (last === undefined || atMs > last.atMs);
  const next = grows ? [...points, { atMs, value }].slice(-SERIES_MAX) : points;
  const observedAtMs = Date.parse(tick.observedAt);
  return { points: next, latest: tick, observedAtMs: Number.isNaN(observedAtMs) ? null : observedAtMs };
}

/** A target's history from the API, followed by the live points newer than its last one. */
function mergeHistory(series: Series | undefined, target: TargetView): Series {
  const history = target.history
    .map((point) => ({ atMs: Date.parse(point.at), value: point.value }))
    .filter((point) => Number.isFinite(point.atMs));
  const lastMs = history.at(-1)?.atMs ?? -Infinity;
  const live = (series?.points ?? []).filter((point) => point.atMs > lastMs);
  return {
    points: [...history, ...live].slice(-SERIES_MAX),
    latest: series?.latest ?? null,
    observedAtMs: series?.observedAtMs ?? null,
  };
}

/** Apply a journaled event the resume bookkeeping found new. */
export function applyEvent(state: PageState, event: JournaledEvent): Change {
  const timeline = addToTimeline(state.timeline, event);
  const replayed = event.seq <= state.baseSeq;
  if (event.type === "lifecycle")
    return {
      state: { ...state, timeline },
      effects: replayed && !state.replayRefreshes ? NO_EFFECTS : lifecycleEffects(event.event),
    };
  // a transition says its target's data changed (a paused vault, a silent publisher: values no tick carries)
  const effects = replayed && !state.replayRefreshes ? NO_EFFECTS : READ_TARGETS;
  // an event at or before the last reply's seq is already in its `active` list, with a newer value
  if (replayed) return { state: { ...state, timeline }, effects };
  const alerts = new Map(state.alerts);
  if (event.alert.status === "firing") alerts.set(event.alert.fingerprint, event.alert);
  else alerts.delete(event.alert.fingerprint);
  return { state: { ...state, timeline, alerts }, effects };
}

/** Apply a live price tick, and learn the daemon's clock from it. */
export function applyTick(state: PageState, tick: PriceTick, browserNowMs: number): PageState {
  const series = new Map(state.series);
  const next = addTick(series.get(tick.target), tick);
  series.set(tick.target, next);
  const clockOffsetMs = next.observedAtMs === null ? state.clockOffsetMs : browserNowMs - next.observedAtMs;
  return { ...state, series, clockOffsetMs };
}

/**
 * Apply a reply that states the firing alerts as of its seq (`subscribed`, `snapshot`). A `subscribed` reply of a
 * first load reads every resource (after subscribing, so any later change comes as an event); one of a resume
 * lets the replayed lifecycle events ask for the reads they need.
 */
export function applyReply(
  state: PageState,
  frame: Extract<ServerFrame, { type: "subscribed" | "snapshot" }>,
  mode: "initial" | "resume" | "refresh",
  browserNowMs: number,
): Change {
  let next: PageState = { ...state, alerts: alertMap(frame.active), baseSeq: frame.seq, connection: "live" };
  if (frame.type === "snapshot") for (const tick of frame.prices) next = applyTick(next, tick, browserNowMs);
  if (frame.type !== "subscribed") return { state: next, effects: NO_EFFECTS };
  return mode === "initial"
    ? { state: { ...next, replayRefreshes: false }, effects: READ_ALL }
    : { state: { ...next, replayRefreshes: true }, effects: NO_EFFECTS };
}

/** The journal no longer held events before `to + 1` when the history was replayed. */
export function applyHistoryGap(state: PageState, to: number): PageState {
  return { ...state, historyFrom: to + 1 };
}

/** The answer of one API read: its value, or why it failed. */
export type Read =
  | { readonly resource: "targets"; readonly value: readonly TargetView[] }
  | { readonly resource: "status"; readonly value: StatusView }
  | { readonly resource: "silences"; readonly value: readonly Silence[] }
  | { readonly resource: Resource; readonly error: string };

/** Apply the answer of one API read; `daemonNowMs` is when it answered. */
export function applyRead(state: PageState, read: Read, daemonNowMs: number): PageState {
  const readErrors = { ...state.readErrors };
  if ("error" in read) return { ...state, readErrors: { ...readErrors, [read.resource]: read.error } };
  delete readErrors[read.resource];
  switch (read.resource) {
    case "targets": {
      const series = new Map(state.series);
      for (const target of read.value) series.set(target.id, mergeHistory(series.get(target.id), target));
      return { ...state, readErrors, targets: read.value, targetsReadAtMs: daemonNowMs, series };
    }
    case "status":
      return { ...state, readErrors, status: read.value };
    case "silences":
      return { ...state, readErrors, silences: read.value };
  }
}

/** The connection changed (the alert map and values stay, shown as the last known state). */
export function applyConnection(state: PageState, connection: Connection): PageState {
  return state.connection === connection ? state : { ...state, connection };
}
