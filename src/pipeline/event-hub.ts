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
import type { Journal, Replay } from "./journal.js";

/** Read side of the hub, what sinks (WebSocket, stdout, chat-ops) consume. */
export interface EventSource {
  /** Live events, emitted synchronously in `seq` order; price ticks interleaved (no seq). */
  readonly events$: Observable<BusEvent>;
  /** Seq of the last journaled event (0 when none). */
  lastSeq(): number;
  /** Journaled events after `since`, with a gap marker when older ones were dropped. */
  replay(since: number): Replay;
  /** Alerts currently firing, oldest first. */
  activeAlerts(): readonly AlertPayload[];
  /** Latest price tick of each target. */
  latestPrices(): readonly PriceTick[];
}

/** Write side used by the pipeline and the composition root. */
export interface EventHub extends EventSource {
  publishAlert(alert: AlertPayload): AlertEvent;
  publishLifecycle(phase: LifecyclePhase, detail?: LifecycleEvent["detail"]): LifecycleEvent;
  publishPrice(tick: PriceTick): void;
  /** Drop the remembered price of a target that is no longer monitored. */
  forgetTarget(targetId: string): void;
  /** Seed the firing set from persisted state without announcing anything. */
  restoreActive(alerts: readonly AlertPayload[]): void;
  complete(): void;
}

/** Create the hub over a journal; `nowMs` and `version` stamp lifecycle events. */
export function createEventHub(options: {
  readonly journal: Journal;
  readonly nowMs: () => number;
  readonly version: string;
  /** Called with each journaled event before any subscriber sees it (durable journal write). */
  readonly persist?: (event: JournaledEvent) => void;
  /**
   * The operator's `alerts.externalLabels` (read per alert, so a reload applies to what is published next).
   * Stamped here, where alerts leave the engine, so the journal, WebSocket, log and every sink see them.
   */
  readonly externalLabels?: () => AlertLabels;
}): EventHub {
  const { journal, nowMs, version, persist } = options;
  const stamp = (alert: AlertPayload): AlertPayload =>
    options.externalLabels === undefined ? alert : withExternalLabels(alert, options.externalLabels());
  const subject = new Subject<BusEvent>();
  const active = new Map<string, AlertPayload>();
  const prices = new Map<string, PriceTick>();

  const emit = <E extends JournaledEvent>(event: E): E => {
    persist?.(event);
    subject.next(event);
    return event;
  };

  return {
    events$: subject.asObservable(),
    lastSeq: () => journal.lastSeq,
    replay: (since) => journal.after(since),
    activeAlerts: () => [...active.values()],
    latestPrices: () => [...prices.values()],
    publishAlert(raw) {
      const alert = stamp(raw);
      if (alert.status === "firing") active.set(alert.fingerprint, alert);
      else active.delete(alert.fingerprint);
      return emit(journal.append({ type: "alert", alert }) as AlertEvent);
    },
    publishLifecycle(phase, detail) {
      const base = { type: "lifecycle" as const, event: phase, at: new Date(nowMs()).toISOString(), version };
      return emit(journal.append(detail === undefined ? base : { ...base, detail }) as LifecycleEvent);
    },
    publishPrice(tick) {
      prices.set(tick.target, tick);
      subject.next({ type: "price", tick });
    },
    forgetTarget(targetId) {
      prices.delete(targetId);
    },
    restoreActive(alerts) {
      for (const alert of alerts) active.set(alert.fingerprint, stamp(alert));
    },
    complete() {
      subject.complete();
    },
  };
}
