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
import { catchUp, dispatchTo } from "./sink-feed.js";
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
 * per outbox, at most 200 transitions per notification.
 */
export const CHATOPS_DEFAULT_POLICY: WorkerPolicy = {
  baseDelayMs: 1_000,
  maxDelayMs: 300_000,
  misconfiguredDelayMs: 60_000,
  maxEntries: 10_000,
  maxGroupEvents: 200,
};

/** Sink names become file names: keep them to a safe alphabet. */
const SINK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$/;
/** Events received while outboxes are still opening; beyond this they are dropped and counted. */
const MAX_EARLY_EVENTS = 10_000;

/** The sinks' shared parts and their lifecycle state, read and changed by the steps below. */
interface SinkSet {
  readonly options: ChatOpsOptions;
  readonly policy: WorkerPolicy;
  readonly timers: Timers;
  /** Running alert sinks, in config order (new ones appended by a reload). */
  workers: { readonly sink: AlertSinkConfig; readonly worker: SinkWorker }[];
  heartbeats: { readonly sink: HeartbeatSinkConfig; readonly beat: Heartbeat }[];
  subscription: Subscription | undefined;
  /** Alerts published while workers are being (re)opened, dispatched once they are; undefined otherwise. */
  early: AlertEvent[] | undefined;
  /** Enabled sinks the latest reconfigure could not open: reported by status() until a reload opens them. */
  unopened: readonly SinkConfig[];
  state: "new" | "started" | "stopped";
}

/** Build the chat-ops sinks over the event bus; nothing happens until `start()`. */
export function createChatOpsSinks(options: ChatOpsOptions): ChatOpsSinks {
  const set: SinkSet = {
    options,
    policy: { ...CHATOPS_DEFAULT_POLICY, ...options.policy },
    timers: {
      setTimer: options.setTimer ?? ((callback, delayMs) => setTimeout(callback, delayMs)),
      clearTimer: options.clearTimer ?? ((handle) => clearTimeout(handle as NodeJS.Timeout)),
    },
    workers: [],
    heartbeats: [],
    subscription: undefined,
    early: undefined,
    unopened: [],
    state: "new",
  };
  return {
    start: () => start(set),
    stop: (deadlineMs) => stop(set, deadlineMs),
    reconfigure: (sinks, deadlineMs) => reconfigure(set, sinks, deadlineMs),
    status: () => [
      ...set.workers.map(({ worker }) => worker.status()),
      ...set.unopened.map((sink) => unopenedStatus(sink)),
      ...set.heartbeats.map(({ beat }) => beat.status()),
    ],
  };
}

/** Subscribe, open every enabled sink's outbox and catch it up, then start delivering and the heartbeats. */
async function start(set: SinkSet): Promise<void> {
  const { options } = set;
  if (set.state !== "new") throw new PmError("PM_ERR_SINK", "chat-ops sinks can only be started once");
  set.state = "started";
  const enabled = options.sinks.filter((sink) => sink.enabled);
  validateNames(enabled);
  const release = holdEvents(set);
  // Subscribe first so nothing published while the outboxes open is lost.
  const subscription = options.source.events$.subscribe((event) => {
    if (event.type !== "alert") return;
    if (set.early === undefined) dispatch(set, event);
    else if (set.early.length < MAX_EARLY_EVENTS) set.early.push(event);
    else options.metrics.droppedEvents.inc({ component: "chatops", reason: "starting" });
  });
  set.subscription = subscription;
  const active = options.source.activeAlerts();
  try {
    for (const sink of enabled) {
      if (sink.kind === "heartbeat") continue;
      const worker = await openWorker(set, sink, active);
      catchUp(sink, worker, set.options);
      set.workers.push({ sink, worker });
    }
  } catch (err) {
    subscription.unsubscribe();
    await Promise.all(set.workers.map(({ worker }) => worker.stop(options.nowMs())));
    throw new PmError("PM_ERR_STATE", "could not open the chat-ops outboxes", { cause: err });
  }
  release();
  for (const { worker } of set.workers) worker.start();
  startHeartbeats(set, enabled, active);
  options.logger.info({ sinks: enabled.map((sink) => sink.name) }, "chat-ops sinks started");
}

/** Stop every sink, each draining on its own until the deadline; throws naming those that failed to stop. */
async function stop(set: SinkSet, deadlineMs: number): Promise<void> {
  const { logger, nowMs } = set.options;
  if (set.state === "stopped") return;
  set.state = "stopped";
  set.subscription?.unsubscribe();
  const deadlineAtMs = nowMs() + Math.max(0, deadlineMs);
  // Each sink drains on its own; one failing stop never keeps the others from closing.
  const stopping = [
    ...set.workers.map(({ sink, worker }) => ({ name: sink.name, stop: worker.stop(deadlineAtMs) })),
    ...set.heartbeats.splice(0).map(({ sink, beat }) => ({ name: sink.name, stop: beat.stop() })),
  ];
  const results = await Promise.allSettled(stopping.map(({ stop }) => stop));
  const failed: string[] = [];
  results.forEach((result, i) => {
    if (result.status === "fulfilled") return;
    const name = stopping[i]?.name ?? "?";
    failed.push(name);
    logger.error({ sink: name, err: result.reason as unknown }, "a chat-ops sink failed to stop cleanly");
  });
  const left = set.workers.reduce((sum, { worker }) => sum + worker.status().pending, 0);
  logger.info({ pending: left }, "chat-ops sinks stopped");
  // the stop goes on for every sink, but the daemon's exit code must show that one failed
  if (failed.length > 0)
    throw new PmError("PM_ERR_SINK", `chat-ops sink(s) ${failed.join(", ")} failed to stop cleanly`);
}

/** Keep the sinks whose config is unchanged, stop the others, open and start the new and changed ones. */
async function reconfigure(set: SinkSet, sinks: readonly SinkConfig[], deadlineMs: number): Promise<void> {
  const { options } = set;
  if (set.state !== "started") throw new PmError("PM_ERR_SINK", "chat-ops sinks are not running");
  const next = sinks.filter((sink) => sink.enabled);
  validateNames(next);
  const wanted = new Map(next.map((sink) => [sink.name, sink]));
  const unchanged = ({ sink }: { readonly sink: SinkConfig }): boolean =>
    JSON.stringify(sink) === JSON.stringify(wanted.get(sink.name));
  const kept = set.workers.filter(unchanged);
  const retired = set.workers.filter((entry) => !kept.includes(entry));
  const keptBeats = set.heartbeats.filter(unchanged);
  const retiredBeats = set.heartbeats.filter((entry) => !keptBeats.includes(entry));
  const keptNames = new Set([...kept, ...keptBeats].map(({ sink }) => sink.name));
  const started = next.filter((sink) => !keptNames.has(sink.name));
  const release = holdEvents(set);
  const failures: SinkConfig[] = [];
  try {
    const deadlineAtMs = options.nowMs() + Math.max(0, deadlineMs);
    await Promise.allSettled([
      ...retired.map(({ worker }) => worker.stop(deadlineAtMs)),
      ...retiredBeats.map(({ beat }) => beat.stop()),
    ]);
    set.workers = kept;
    set.heartbeats = keptBeats;
    await startAdded(set, started, failures);
  } finally {
    set.unopened = failures;
    release();
  }
  options.logger.info(
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
}

/** Start the heartbeats among `added`, then open, catch up and start its alert sinks; `failures` gets those that could not open. */
async function startAdded(set: SinkSet, added: readonly SinkConfig[], failures: SinkConfig[]): Promise<void> {
  const active = set.options.source.activeAlerts();
  startHeartbeats(set, added, active);
  for (const sink of added) {
    if (sink.kind === "heartbeat") continue;
    try {
      const worker = await openWorker(set, sink, active);
      catchUp(sink, worker, set.options);
      set.workers.push({ sink, worker });
      worker.start();
    } catch {
      failures.push(sink);
    }
  }
}

/** Route one alert to every running sink. */
function dispatch(set: SinkSet, event: AlertEvent): void {
  for (const { sink, worker } of set.workers) dispatchTo(sink, worker, event, set.options.metrics);
}

/** Hold alerts published while workers are being (re)opened; the returned `release` dispatches them in order. */
function holdEvents(set: SinkSet): () => void {
  set.early = [];
  return () => {
    const buffered = set.early ?? [];
    set.early = undefined;
    for (const event of buffered) dispatch(set, event);
  };
}

/** Open `sink`'s outbox and build its worker, given the alerts firing now. */
function openWorker(
  set: SinkSet,
  sink: AlertSinkConfig,
  active: readonly AlertPayload[],
): Promise<SinkWorker> {
  const { options } = set;
  return openSinkWorker({
    sink,
    outboxDir: join(options.stateDir, "outbox"),
    dispatcher: options.dispatcher,
    metrics: options.metrics,
    logger: options.logger,
    raise: options.raise,
    nowMs: options.nowMs,
    random: options.random,
    timers: set.timers,
    policy: set.policy,
    startSeq: options.source.lastSeq(),
    // what Alertmanager is re-sent: only alerts it was told of (one silenced from its start never was)
    firing: active.filter(
      (alert) => routeAlert(sink, alert) && options.source.wasNotified(alert.fingerprint),
    ),
    ownSinkError: ownSinkError(sink, active),
    generatorUrl: options.generatorUrl,
  });
}

/** Start the heartbeats among `sinks` (they have no outbox: nothing to open or catch up). */
function startHeartbeats(set: SinkSet, sinks: readonly SinkConfig[], active: readonly AlertPayload[]): void {
  const { options } = set;
  for (const sink of sinks) {
    if (sink.kind !== "heartbeat") continue;
    const beat = createHeartbeat({
      sink,
      dispatcher: options.dispatcher,
      metrics: options.metrics,
      logger: options.logger,
      raise: options.raise,
      nowMs: options.nowMs,
      timers: set.timers,
      isHealthy: options.isHealthy ?? (() => true),
      ownSinkError: ownSinkError(sink, active),
    });
    set.heartbeats.push({ sink, beat });
    beat.start();
  }
}

/** This sink's own `sink_error` among the alerts firing now (restored after a restart). */
function ownSinkError(sink: SinkConfig, active: readonly AlertPayload[]): AlertPayload | undefined {
  return active.find((alert) => alert.rule === "sink_error" && alert.labels["sink"] === sink.name);
}

/** The status of an enabled sink whose outbox could not be opened: nothing is delivered. */
function unopenedStatus(sink: SinkConfig): SinkStatus {
  return {
    name: sink.name,
    kind: sink.kind,
    pending: 0,
    failing: false,
    consecutiveFailures: 0,
    lastError: "outbox could not be opened",
    running: false,
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
