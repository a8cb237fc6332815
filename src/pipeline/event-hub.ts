// The daemon's event bus: numbers alert and lifecycle events through the journal, tracks firing alerts and latest prices.
import { Subject, type Observable } from "rxjs";
import { withExternalLabels } from "../domain/external-labels.js";
import type {
  AlertEvent,
  AlertLabels,
  AlertPayload,
  BusEvent,
  JournaledEvent,
  LifecycleEvent,
  LifecyclePhase,
  PriceTick,
} from "../domain/events.js";
import { sameStrings } from "../domain/lists.js";
import { muteTransition, type MuteMemory } from "../domain/silence.js";
import type { Journal, Replay, UnnumberedEvent } from "../state/journal.js";

/** Read side of the hub, what sinks (WebSocket, stdout, chat-ops) consume. */
export interface EventSource {
  /** Live events, emitted synchronously in `seq` order; price ticks interleaved (no seq). */
  readonly events$: Observable<BusEvent>;
  /** Seq of the last journaled event (0 when none). */
  lastSeq(): number;
  /** Seq of the oldest journaled event still held for replay (`lastSeq() + 1` when none). */
  oldestSeq(): number;
  /** Journaled events after `since`, with a gap marker when older ones were dropped. */
  replay(since: number): Replay;
  /** Alerts currently firing, oldest first. */
  activeAlerts(): readonly AlertPayload[];
  /** Latest price tick of each target. */
  latestPrices(): readonly PriceTick[];
  /**
   * Ask for `price` events on `events$` (until the returned release is called): without a taker, a price is only
   * remembered for `latestPrices`, and its tick is neither built nor emitted (DESIGN §7: prices cost nothing then).
   */
  wantPrices(): () => void;
  /** Whether an announcement of this firing alert went out to the sinks (false while every one was muted). */
  wasNotified(fingerprint: string): boolean;
}

/** Write side used by the pipeline and the composition root. */
export interface EventHub extends EventSource {
  publishAlert(alert: AlertPayload): AlertEvent;
  publishLifecycle(phase: LifecyclePhase, detail?: LifecycleEvent["detail"]): LifecycleEvent;
  /** A target's latest price: remembered for `latestPrices`, emitted while someone wants prices; `tick` builds it when needed. */
  publishPrice(targetId: string, tick: () => PriceTick): void;
  /** Drop the remembered price of a target that is no longer monitored. */
  forgetTarget(targetId: string): void;
  /** Seed the firing set from persisted state without announcing anything. */
  restoreActive(alerts: readonly AlertPayload[]): void;
  /**
   * Stop listing these alerts as active without a transition (their target moved to another cluster member); when
   * the firing set follows the cluster's log (forward), where they still fire, only this member's mute memory goes.
   */
  releaseActive(fingerprints: readonly string[]): void;
  /** Journal and emit an event numbered by the cluster's log (cluster mode: every member's events come back here). */
  deliver(event: JournaledEvent): void;
  /**
   * Emit an alert on this process's bus only (its log sink, its WebSocket clients, its firing set), journaled and
   * forwarded nowhere, carrying the last seq: `cluster_error`, raised while the cluster's log cannot be reached.
   */
  announceLocal(alert: AlertPayload): AlertEvent;
  /** Show the current payload of alerts already firing (a held alert's value), journaling and announcing nothing. */
  refreshActive(alerts: readonly AlertPayload[]): void;
  complete(): void;
}

/** Seed the firing set with `alerts`, muted as the previous run published them (the journal's `journaled` memory). */
function restoreAlerts(
  maps: { readonly active: Map<string, AlertPayload>; readonly mutes: Map<string, MuteMemory> },
  journaled: ReadonlyMap<string, MuteMemory>,
  alerts: readonly AlertPayload[],
): void {
  for (const alert of alerts) {
    const memory = journaled.get(alert.fingerprint);
    maps.active.set(alert.fingerprint, withMuting(alert, memory?.silencedBy ?? [], alert.causedBy));
    if (memory !== undefined && !isPlainNotified(memory)) maps.mutes.set(alert.fingerprint, memory);
  }
}

/** Remove alerts from the hub's maps by fingerprint (nothing announced). */
function forgetAlerts(maps: readonly Map<string, unknown>[], fingerprints: readonly string[]): void {
  for (const map of maps) for (const fingerprint of fingerprints) map.delete(fingerprint);
}

/** Create the hub over a journal; `nowMs` and `version` stamp lifecycle events. */
export function createEventHub(options: {
  readonly journal: Journal;
  readonly nowMs: () => number;
  readonly version: string;
  /** Called with each journaled event before any subscriber sees it (durable journal write). */
  readonly persist?: (event: JournaledEvent) => void;
  /** Called with every alert published, whatever made it (rule engine, sinks, the composition root). */
  readonly onAlert?: (alert: AlertPayload) => void;
  /**
   * The operator's `alerts.externalLabels` (read per alert, so a reload applies to what is published next).
   * Stamped here, where alerts leave the engine, so the journal, WebSocket, log and every sink see them.
   */
  readonly externalLabels?: () => AlertLabels;
  /** Ids of the silences active now that mute `alert` (sorted; empty when none): stamped as `silencedBy`. */
  readonly silencing?: (alert: AlertPayload) => readonly string[];
  /**
   * Cluster mode: journaled events go to the cluster's log instead of `journal` (and `persist`), and come back
   * numbered through `deliver`, which journals and emits them; the returned event's seq is then the last delivered.
   */
  readonly forward?: (event: UnnumberedEvent) => void;
}): EventHub {
  const { journal, nowMs, version, persist, onAlert, forward } = options;
  const stamp = (alert: AlertPayload): AlertPayload =>
    options.externalLabels === undefined ? alert : withExternalLabels(alert, options.externalLabels());
  const subject = new Subject<BusEvent>();
  const active = new Map<string, AlertPayload>();
  /** Muting of each firing alert (absent: never muted, notified): what its resolve carries. */
  const mutes = new Map<string, MuteMemory>();
  const prices = createPriceBook();
  const mute = (alert: AlertPayload): AlertPayload => muteAlert(mutes, options.silencing, alert);
  const emit = <E extends JournaledEvent>(event: E): E => {
    persist?.(event);
    subject.next(event);
    return event;
  };
  const record = (event: UnnumberedEvent): JournaledEvent => {
    if (forward === undefined) return emit(journal.append(event));
    forward(event);
    return { ...event, seq: journal.lastSeq };
  };
  return {
    events$: subject.asObservable(),
    lastSeq: () => journal.lastSeq,
    oldestSeq: () => journal.oldestSeq,
    replay: (since) => journal.after(since),
    activeAlerts: () => [...active.values()],
    latestPrices: () => prices.latest(),
    wantPrices: () => prices.want(),
    // no memory: never muted (or muted only after a notified announcement, which the memory keeps as notified);
    // a child of a firing cause alert (causedBy) counts as muted, so its resolve is left out as its firing was
    wasNotified: (fingerprint) => mutes.get(fingerprint)?.notified ?? true,
    publishAlert(raw) {
      const alert = mute(stamp(raw));
      // forwarded: the firing set follows the cluster's log (deliver), as every member serves it
      if (forward === undefined) trackActive(active, alert);
      const event = record({ type: "alert", alert }) as AlertEvent;
      onAlert?.(alert);
      return event;
    },
    publishLifecycle(phase, detail) {
      const base = { type: "lifecycle" as const, event: phase, at: new Date(nowMs()).toISOString(), version };
      return record(detail === undefined ? base : { ...base, detail }) as LifecycleEvent;
    },
    publishPrice(targetId, tick) {
      const built = prices.offer(targetId, tick);
      if (built !== null) subject.next({ type: "price", tick: built });
    },
    forgetTarget(targetId) {
      prices.forget(targetId);
    },
    restoreActive: (alerts) =>
      restoreAlerts({ active, mutes }, mutesOf(journal.entries()), alerts.map(stamp)),
    releaseActive: (fingerprints) =>
      forgetAlerts(forward === undefined ? [active, mutes] : [mutes], fingerprints),
    deliver(event) {
      journal.insert(event);
      if (event.type === "alert") trackActive(active, event.alert);
      emit(event);
    },
    announceLocal: (raw) => emitLocal(active, subject, journal.lastSeq, mute(stamp(raw)), onAlert),
    refreshActive(alerts) {
      // only fingerprints still firing here: a late refresh never brings back a resolved alert
      for (const alert of alerts) {
        const previous = active.get(alert.fingerprint);
        if (previous !== undefined)
          active.set(alert.fingerprint, withMuting(stamp(alert), previous.silencedBy ?? [], alert.causedBy));
      }
    },
    complete() {
      subject.complete();
    },
  };
}

/** Track and emit an alert event that is journaled nowhere (its seq is the last journaled one). */
function emitLocal(
  active: Map<string, AlertPayload>,
  subject: Subject<BusEvent>,
  seq: number,
  alert: AlertPayload,
  onAlert: ((alert: AlertPayload) => void) | undefined,
): AlertEvent {
  const event: AlertEvent = { type: "alert", seq, alert };
  trackActive(active, alert);
  subject.next(event);
  onAlert?.(alert);
  return event;
}

/** Each target's latest price, and how many take price events now. */
interface PriceBook {
  /** Every target's latest tick (those not built yet are built now, and kept). */
  latest(): PriceTick[];
  /** One more taker of price events, until the returned release is called (once). */
  want(): () => void;
  /** Remember a target's latest price; its tick, built, when someone takes price events, else null (not built). */
  offer(targetId: string, tick: () => PriceTick): PriceTick | null;
  forget(targetId: string): void;
}

function createPriceBook(): PriceBook {
  const prices = new Map<string, PriceTick | (() => PriceTick)>();
  let takers = 0;
  return {
    latest: () =>
      [...prices].map(([target, tick]) => {
        if (typeof tick !== "function") return tick;
        const built = tick();
        prices.set(target, built);
        return built;
      }),
    want() {
      takers += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        takers -= 1;
      };
    },
    offer(targetId, tick) {
      if (takers === 0) {
        prices.set(targetId, tick);
        return null;
      }
      const built = tick();
      prices.set(targetId, built);
      return built;
    },
    forget: (targetId) => void prices.delete(targetId),
  };
}

/** `alert` stamped with its muting (the silences muting it now, and what `mutes` remembers of it), `mutes` updated. */
function muteAlert(
  mutes: Map<string, MuteMemory>,
  silencing: ((alert: AlertPayload) => readonly string[]) | undefined,
  alert: AlertPayload,
): AlertPayload {
  const ids = alert.status === "firing" ? (silencing?.(alert) ?? []) : [];
  // absent means notified and never muted since, except for a new firing, which owes nothing to the last one
  const previous = alert.reason === "first" ? undefined : (mutes.get(alert.fingerprint) ?? NOTIFIED);
  const { silencedBy, causedBy, memory } = muteTransition(previous, alert.status, ids, alert.causedBy);
  if (memory === undefined || isPlainNotified(memory)) mutes.delete(alert.fingerprint);
  else mutes.set(alert.fingerprint, memory);
  return withMuting(alert, silencedBy, causedBy);
}

/** Keep `active` the set of firing alerts after `alert`'s transition. */
function trackActive(active: Map<string, AlertPayload>, alert: AlertPayload): void {
  if (alert.status === "firing") active.set(alert.fingerprint, alert);
  else active.delete(alert.fingerprint);
}

/** The muting an alert absent from the hub's memory had: notified, muted by nothing. */
const NOTIFIED: MuteMemory = { silencedBy: [], notified: true };

/** A memory the hub need not keep: notified, and its latest announcement muted by nothing. */
function isPlainNotified(memory: MuteMemory): boolean {
  return memory.notified && memory.silencedBy.length === 0 && memory.causedBy === undefined;
}

/**
 * `alert` carrying exactly `silencedBy` and `causedBy` (each absent when empty, as on every alert no silence or
 * parent touches): the hub's one decision, which every sink and a restart read back.
 */
function withMuting(
  alert: AlertPayload,
  silencedBy: readonly string[],
  causedBy: string | undefined,
): AlertPayload {
  if (alert.causedBy === causedBy && sameSilences(alert.silencedBy, silencedBy)) return alert;
  const { silencedBy: _silences, causedBy: _parent, ...rest } = alert;
  const silenced = silencedBy.length > 0 ? { ...rest, silencedBy } : rest;
  return causedBy === undefined ? silenced : { ...silenced, causedBy };
}

/** Whether an alert's `silencedBy` (absent = none) says `ids`. */
function sameSilences(current: readonly string[] | undefined, ids: readonly string[]): boolean {
  return current === undefined ? ids.length === 0 : current.length > 0 && sameStrings(current, ids);
}

/**
 * Muting of each alert still firing at the end of `events` (journal order): the silences on its latest
 * announcement, and whether one of its announcements since it first fired went out unmuted.
 */
function mutesOf(events: readonly JournaledEvent[]): Map<string, MuteMemory> {
  const memories = new Map<string, MuteMemory>();
  for (const event of events) {
    if (event.type !== "alert") continue;
    const { fingerprint, status, reason } = event.alert;
    if (status === "resolved") {
      memories.delete(fingerprint);
      continue;
    }
    // an announcement's silencedBy is the muting decided when it was published: replay that decision
    const earlier = reason === "first" ? undefined : memories.get(fingerprint);
    const { memory } = muteTransition(earlier, "firing", event.alert.silencedBy ?? [], event.alert.causedBy);
    if (memory !== undefined) memories.set(fingerprint, memory);
  }
  return memories;
}
