// Composition of the chat-ops sinks: routes bus alerts into per-sink outboxes and runs one delivery loop per sink.
import { join } from "node:path";
import type { Subscription } from "rxjs";
import type { Dispatcher } from "undici";
import type { Logger } from "pino";
import type { AlertSinkConfig, HeartbeatSinkConfig, SinkConfig } from "../../config/types.js";
import type { AlertEvent, AlertPayload } from "../../domain/events.js";
import { PmError } from "../../domain/errors.js";
import type { Metrics } from "../../metrics.js";
import type { EventSource } from "../../pipeline/event-hub.js";
import type { Timers } from "../../http-client.js";
import { createHeartbeat, type Heartbeat } from "./heartbeat.js";
import { routeAlert } from "./route.js";
import { openSinkWorker, type SinkStatus, type SinkWorker, type WorkerPolicy } from "./sink-worker.js";

/** Options of `createChatOpsSinks`; clock, randomness and timers are injected. */
export interface ChatOpsOptions {
  readonly sinks: readonly SinkConfig[];
  readonly source: EventSource;
  readonly stateDir: string;
  readonly dispatcher: Dispatcher;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Publishes `sink_error` alerts (and their resolves) on the bus. */
  readonly raise: (alert: AlertPayload) => void;
  readonly nowMs: () => number;
  readonly random: () => number;
  readonly setTimer?: (callback: () => void, delayMs: number) => unknown;
  readonly clearTimer?: (handle: unknown) => void;
  /** Retry backoff and bounds; see CHATOPS_DEFAULT_POLICY. */
  readonly policy?: Partial<WorkerPolicy>;
  /** Link to an alert in this daemon by fingerprint (Alertmanager's generatorURL); none when omitted. */
  readonly generatorUrl?: (fingerprint: string) => string;
  /** Whether the daemon itself works (its self-health): heartbeat sinks ping only while it does (default: always). */
  readonly isHealthy?: () => boolean;
}

/** The running chat-ops sinks. */
export interface ChatOpsSinks {
  /** Open every enabled sink's outbox (redelivering what a previous run left) and start delivering. */
  start(): Promise<void>;
  /** Stop accepting events and drain for at most `deadlineMs` from now; what is left stays on disk. */
  stop(deadlineMs: number): Promise<void>;
  /**
   * Apply a new sink list (SIGHUP): unchanged sinks keep running untouched; removed or changed ones drain
   * for at most `deadlineMs` and stop (their outbox stays on disk); added or changed ones open and start.
   */
  reconfigure(sinks: readonly SinkConfig[], deadlineMs: number): Promise<void>;
  /** Every enabled sink: the running ones, then those whose outbox could not be opened (`running: false`). */
  status(): readonly SinkStatus[];
}

/**
 * Default delivery policy: backoff 1 s → 5 min (1 min → 5 min after a 401/403/404/410), 10 000 messages
 * per outbox, digests of at most 200.
 */
export const CHATOPS_DEFAULT_POLICY: WorkerPolicy = {
  baseDelayMs: 1_000,
  maxDelayMs: 300_000,
  misconfiguredDelayMs: 60_000,
  maxEntries: 10_000,
  maxDigestEntries: 200,
};

/** Sink names become file names: keep them to a safe alphabet. */
const SINK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$/;
/** Events received while outboxes are still opening; beyond this they are dropped and counted. */
const MAX_EARLY_EVENTS = 10_000;

/** Build the chat-ops sinks over the event bus; nothing happens until `start()`. */
export function createChatOpsSinks(options: ChatOpsOptions): ChatOpsSinks {
  const { logger, nowMs } = options;
  const policy: WorkerPolicy = { ...CHATOPS_DEFAULT_POLICY, ...options.policy };
  const timers: Timers = {
    setTimer: options.setTimer ?? ((callback, delayMs) => setTimeout(callback, delayMs)),
    clearTimer: options.clearTimer ?? ((handle) => clearTimeout(handle as NodeJS.Timeout)),
  };
  const enabled = options.sinks.filter((sink) => sink.enabled);
  const workers: { readonly sink: AlertSinkConfig; readonly worker: SinkWorker }[] = [];
  const heartbeats: { readonly sink: HeartbeatSinkConfig; readonly beat: Heartbeat }[] = [];
  let subscription: Subscription | undefined;
  let early: AlertEvent[] | undefined;
  /** Enabled sinks the latest reconfigure could not open: reported by status() until a reload opens them. */
  let unopened: readonly SinkConfig[] = [];
  let state: "new" | "started" | "stopped" = "new";

  const dispatchTo = (sink: AlertSinkConfig, worker: SinkWorker, event: AlertEvent): void => {
    if (routeAlert(sink, event.alert)) return worker.enqueue(event);
    worker.skip(event.seq);
    if (event.alert.status === "resolved" && routeAlert({ ...sink, sendResolved: true }, event.alert))
      worker.forget(event.alert.fingerprint);
  };
  const dispatch = (event: AlertEvent): void => {
    for (const { sink, worker } of workers) dispatchTo(sink, worker, event);
  };
  /**
   * Give a freshly opened sink what the journal holds after its high-water mark: alerts published but
   * not yet in its outbox when the daemon died (kill -9 between the journal write and the outbox write).
   */
  const catchUp = (sink: AlertSinkConfig, worker: SinkWorker): void => {
    const { gap, events } = options.source.replay(worker.highWater);
    if (gap !== null) {
      logger.error({ sink: sink.name, ...gap }, "journal no longer holds alerts this sink missed");
      options.metrics.droppedEvents.inc(
        { component: "chatops", reason: "journal_gap" },
        gap.to - gap.from + 1,
      );
    }
    let replayed = 0;
    for (const event of events) {
      if (event.type !== "alert") continue;
      // A previous run's watchdog says nothing about this one: it fires again once this run is ready.
      if (event.alert.rule === "watchdog") {
        worker.skip(event.seq);
        continue;
      }
      if (routeAlert(sink, event.alert) && event.seq > worker.highWater) replayed++;
      dispatchTo(sink, worker, event);
    }
    if (replayed > 0)
      logger.warn({ sink: sink.name, replayed }, "re-queued journaled alerts missing from the outbox");
  };

  const ownSinkError = (sink: SinkConfig, active: readonly AlertPayload[]): AlertPayload | undefined =>
    active.find((alert) => alert.rule === "sink_error" && alert.labels["sink"] === sink.name);
  const beat = (sink: HeartbeatSinkConfig, active: readonly AlertPayload[]): Heartbeat =>
    createHeartbeat({
      sink,
      dispatcher: options.dispatcher,
      metrics: options.metrics,
      logger,
      raise: options.raise,
      nowMs,
      timers,
      isHealthy: options.isHealthy ?? (() => true),
      ownSinkError: ownSinkError(sink, active),
    });
  /** Start the heartbeats among `sinks` (they have no outbox: nothing to open or catch up). */
  const startHeartbeats = (sinks: readonly SinkConfig[], active: readonly AlertPayload[]): void => {
    for (const sink of sinks) {
      if (sink.kind !== "heartbeat") continue;
      const entry = { sink, beat: beat(sink, active) };
      heartbeats.push(entry);
      entry.beat.start();
    }
  };

  const open = (sink: AlertSinkConfig, active: readonly AlertPayload[]): Promise<SinkWorker> =>
    openSinkWorker({
      sink,
      outboxDir: join(options.stateDir, "outbox"),
      dispatcher: options.dispatcher,
      metrics: options.metrics,
      logger,
      raise: options.raise,
      nowMs,
      random: options.random,
      timers,
      policy,
      startSeq: options.source.lastSeq(),
      firing: active.filter((alert) => routeAlert(sink, alert)),
      ownSinkError: ownSinkError(sink, active),
      generatorUrl: options.generatorUrl,
    });

  /** Hold alerts published while workers are being (re)opened; `release` dispatches them in order. */
  const holdEvents = (): (() => void) => {
    early = [];
    return () => {
      const buffered = early ?? [];
      early = undefined;
      for (const event of buffered) dispatch(event);
    };
  };

  return {
    async start() {
      if (state !== "new") throw new PmError("PM_ERR_SINK", "chat-ops sinks can only be started once");
      state = "started";
      validateNames(enabled);
      const release = holdEvents();
      // Subscribe first so nothing published while the outboxes open is lost.
      subscription = options.source.events$.subscribe((event) => {
        if (event.type !== "alert") return;
        if (early === undefined) dispatch(event);
        else if (early.length < MAX_EARLY_EVENTS) early.push(event);
        else options.metrics.droppedEvents.inc({ component: "chatops", reason: "starting" });
      });
      const active = options.source.activeAlerts();
      try {
        for (const sink of enabled) {
          if (sink.kind === "heartbeat") continue;
          const worker = await open(sink, active);
          catchUp(sink, worker);
          workers.push({ sink, worker });
        }
      } catch (err) {
        subscription.unsubscribe();
        await Promise.all(workers.map(({ worker }) => worker.stop(nowMs())));
        throw new PmError("PM_ERR_STATE", "could not open the chat-ops outboxes", { cause: err });
      }
      release();
      for (const { worker } of workers) worker.start();
      startHeartbeats(enabled, active);
      logger.info({ sinks: enabled.map((sink) => sink.name) }, "chat-ops sinks started");
    },
    async stop(deadlineMs) {
      if (state === "stopped") return;
      state = "stopped";
      subscription?.unsubscribe();
      const deadlineAtMs = nowMs() + Math.max(0, deadlineMs);
      // Each sink drains on its own; one failing stop never keeps the others from closing.
      const stopping = [
        ...workers.map(({ sink, worker }) => ({ name: sink.name, stop: worker.stop(deadlineAtMs) })),
        ...heartbeats.splice(0).map(({ sink, beat }) => ({ name: sink.name, stop: beat.stop() })),
      ];
      const results = await Promise.allSettled(stopping.map(({ stop }) => stop));
      const failed: string[] = [];
      results.forEach((result, i) => {
        if (result.status === "fulfilled") return;
        const name = stopping[i]?.name ?? "?";
        failed.push(name);
        logger.error({ sink: name, err: result.reason as unknown }, "a chat-ops sink failed to stop cleanly");
      });
      const left = workers.reduce((sum, { worker }) => sum + worker.status().pending, 0);
      logger.info({ pending: left }, "chat-ops sinks stopped");
      // the stop goes on for every sink, but the daemon's exit code must show that one failed
      if (failed.length > 0)
        throw new PmError("PM_ERR_SINK", `chat-ops sink(s) ${failed.join(", ")} failed to stop cleanly`);
    },
    async reconfigure(sinks, deadlineMs) {
      if (state !== "started") throw new PmError("PM_ERR_SINK", "chat-ops sinks are not running");
      const next = sinks.filter((sink) => sink.enabled);
      validateNames(next);
      const same = (a: SinkConfig, b: SinkConfig | undefined): boolean =>
        JSON.stringify(a) === JSON.stringify(b);
      const wanted = new Map(next.map((sink) => [sink.name, sink]));
      const kept = workers.filter(({ sink }) => same(sink, wanted.get(sink.name)));
      const retired = workers.filter((entry) => !kept.includes(entry));
      const keptBeats = heartbeats.filter(({ sink }) => same(sink, wanted.get(sink.name)));
      const retiredBeats = heartbeats.filter((entry) => !keptBeats.includes(entry));
      const keptNames = new Set([...kept, ...keptBeats].map(({ sink }) => sink.name));
      const release = holdEvents();
      const failures: SinkConfig[] = [];
      try {
        const deadlineAtMs = nowMs() + Math.max(0, deadlineMs);
        await Promise.allSettled([
          ...retired.map(({ worker }) => worker.stop(deadlineAtMs)),
          ...retiredBeats.map(({ beat }) => beat.stop()),
        ]);
        workers.splice(0, workers.length, ...kept);
        heartbeats.splice(0, heartbeats.length, ...keptBeats);
        const active = options.source.activeAlerts();
        startHeartbeats(
          next.filter((sink) => !keptNames.has(sink.name)),
          active,
        );
        for (const sink of next) {
          if (keptNames.has(sink.name) || sink.kind === "heartbeat") continue;
          try {
            const worker = await open(sink, active);
            catchUp(sink, worker);
            workers.push({ sink, worker });
            worker.start();
          } catch {
            failures.push(sink);
          }
        }
      } finally {
        unopened = failures;
        release();
      }
      const started = next.filter((sink) => !keptNames.has(sink.name));
      logger.info(
        {
          kept: [...keptNames],
          stopped: [...retired, ...retiredBeats].map(({ sink }) => sink.name),
          started: started.map((sink) => sink.name),
        },
        "chat-ops sinks reconfigured",
      );
      if (failures.length > 0)
        throw new PmError(
          "PM_ERR_STATE",
          `could not open the outbox of sink(s) ${failures.map((sink) => sink.name).join(", ")}`,
        );
    },
    status: () => [
      ...workers.map(({ worker }) => worker.status()),
      ...unopened.map((sink) => ({
        name: sink.name,
        kind: sink.kind,
        pending: 0,
        failing: false,
        consecutiveFailures: 0,
        lastError: "outbox could not be opened",
        running: false,
      })),
      ...heartbeats.map(({ beat }) => beat.status()),
    ],
  };
}

function validateNames(sinks: readonly SinkConfig[]): void {
  const seen = new Set<string>();
  for (const sink of sinks) {
    if (!SINK_NAME.test(sink.name))
      throw new PmError("PM_ERR_CONFIG", `sink name "${sink.name}" must match ${SINK_NAME.source}`, {
        details: { key: "sinks" },
      });
    if (seen.has(sink.name))
      throw new PmError("PM_ERR_CONFIG", `duplicate sink name "${sink.name}"`, { details: { key: "sinks" } });
    seen.add(sink.name);
  }
}
