// One sink's delivery loop, a thin shell around sink-schedule.ts: timers, outbox I/O, HTTP, metrics and logs.
import type { Dispatcher } from "undici";
import type { Logger } from "pino";
import { childLogger } from "../../logger.js";
import type { AlertSinkConfig, SinkKind } from "../../config/types.js";
import type { AlertEvent, AlertPayload } from "../../domain/events.js";
import type { Metrics } from "../../metrics.js";
import { createTokenBucket, type TokenBucket } from "../../token-bucket.js";
import type { Timers } from "../../http-client.js";
import { hostOf, type DeliveryOutcome } from "./delivery.js";
import { actionMessage, sendMessage } from "./send.js";
import { openOutbox, type Outbox, type OutboxEntry } from "./outbox.js";
import { isAlertEvent } from "../../state/event-schema.js";
import { endpointUrl } from "./render.js";
import { forgetAlert, isGroupsState, type GroupsState } from "./group-schedule.js";
import { createSinkHealth, type SinkHealth } from "./sink-health.js";
import { createWaker, type Waker } from "./waker.js";
import {
  decideNext,
  initialSchedule,
  schedulePolicyOf,
  sinkRetryDelayMs,
  settleAttempt,
  waitOrStop,
  type RefreshAction,
  type SinkRetryPolicy,
  type ScheduleAction,
  type SchedulePolicy,
  type ScheduleState,
  type ScheduleView,
  type SendAction,
} from "./sink-schedule.js";
import type { AnyMessage } from "./types.js";

/** Retry and sizing policy shared by every sink. */
export interface WorkerPolicy extends SinkRetryPolicy {
  readonly maxEntries: number;
  /** Most transitions one notification carries (the rest go in the group's next one). */
  readonly maxGroupEvents: number;
}

/** Every `outcome` label of `pragma_monitor_sink_deliveries_total` (ok, rejected, and the retry outcomes). */
const DELIVERY_OUTCOMES = ["ok", "rejected", "http_error", "rate_limited", "timeout", "network"] as const;

/** What `status()` reports per sink. */
export interface SinkStatus {
  readonly name: string;
  readonly kind: SinkKind;
  readonly pending: number;
  /** A `sink_error` alert is firing for this sink. */
  readonly failing: boolean;
  /** Failed deliveries since the last success. */
  readonly consecutiveFailures: number;
  /** The latest failure since the last success (`outcome [status] [code]`), null when none. */
  readonly lastError: string | null;
  /** False for an enabled sink whose outbox could not be opened on a reload (nothing is delivered). */
  readonly running: boolean;
  /** Notification groups it holds now (alerts firing, or resolves not yet notified); the sink_groups gauge. */
  readonly groups: number;
}

/** A running sink: `enqueue` only appends to the outbox; the loop delivers on its own schedule. */
export interface SinkWorker {
  /** Take in an alert routed to this sink; one at or below `highWater` was taken in already and is ignored. */
  enqueue(event: AlertEvent): void;
  /** An alert not routed to this sink: only advances `highWater`. */
  skip(seq: number): void;
  /** Highest journal seq this sink has taken in, persisted in its outbox (restart replays the journal after it). */
  readonly highWater: number;
  /** An alert resolved that this sink does not announce (sendResolved off): stop re-sending it. */
  forget(fingerprint: string): void;
  start(): void;
  /** Stop accepting, drain until `deadlineAtMs` (absolute, on the injected clock), then close the outbox. */
  stop(deadlineAtMs: number): Promise<void>;
  status(): SinkStatus;
}

/** What every sink (alert worker or heartbeat) takes from the composition root. */
export interface SinkDeps {
  readonly dispatcher: Dispatcher;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Publishes this sink's `sink_error` alert (and its resolve) on the bus. */
  readonly raise: (alert: AlertPayload) => void;
  readonly nowMs: () => number;
  readonly timers: Timers;
}

/** What `openSinkWorker` takes: the shared sink dependencies and this sink's config, outbox and history. */
export interface SinkWorkerOptions extends SinkDeps {
  readonly sink: AlertSinkConfig;
  readonly outboxDir: string;
  readonly random: () => number;
  /** Journal seq a sink with no outbox file yet starts from (it gets no history). */
  readonly startSeq: number;
  readonly policy: WorkerPolicy;
  /** Alerts already firing at start (Alertmanager re-sends them). */
  readonly firing: readonly AlertPayload[];
  /** This sink's own `sink_error` alert if it was still firing at start (restored after a restart). */
  readonly ownSinkError?: AlertPayload | undefined;
  /** Link to an alert in this daemon by fingerprint (Alertmanager's generatorURL). */
  readonly generatorUrl?: ((fingerprint: string) => string) | undefined;
}

type Entry = OutboxEntry<AlertEvent>;

/** One worker's parts and the little state the shell keeps; every decision about it is in sink-schedule.ts. */
interface Worker {
  readonly options: SinkWorkerOptions;
  readonly labels: { readonly sink: string };
  readonly logger: Logger;
  readonly outbox: Outbox<AlertEvent, GroupsState>;
  readonly health: SinkHealth;
  readonly bucket: TokenBucket;
  readonly url: string;
  readonly schedulePolicy: SchedulePolicy;
  readonly stopController: AbortController;
  readonly waker: Waker;
  /** Alerts firing now, by fingerprint, re-sent every resend interval (Alertmanager only; else empty). */
  readonly firing: Map<string, AlertPayload>;
  schedule: ScheduleState;
  /** Set by `stop()`: no more appends, drain until the deadline. */
  stopping: { readonly drainUntilMs: number } | null;
  loop: Promise<void> | undefined;
}

/** Open the sink's outbox and build its worker (the loop starts with `start()`). */
export async function openSinkWorker(options: SinkWorkerOptions): Promise<SinkWorker> {
  const { sink, metrics, nowMs, policy } = options;
  const host = hostOf(sink.url);
  const logger = childLogger(options.logger, { sink: sink.name, kind: sink.kind, host });
  const labels = { sink: sink.name };
  const waker = createWaker(options.timers);
  const outbox = await openSinkOutbox(options, logger, waker.wake);
  const schedulePolicy = schedulePolicyOf(sink, policy);
  const { resendIntervalMs } = schedulePolicy;
  const initiallyFiring = resendIntervalMs > 0 ? options.firing.slice(0, policy.maxEntries) : [];
  const firing = new Map(initiallyFiring.map((alert) => [alert.fingerprint, alert]));
  const restoredFiring = options.ownSinkError;
  const worker: Worker = {
    options,
    labels,
    logger,
    outbox,
    health: createSinkHealth({
      sink,
      host,
      raise: options.raise,
      nowMs,
      logger,
      ...(restoredFiring === undefined ? {} : { restoredFiring }),
    }),
    bucket: createTokenBucket({ ratePerMinute: sink.ratePerMinute, burst: sink.burst, nowMs: nowMs() }),
    url: endpointUrl(sink),
    schedulePolicy,
    stopController: new AbortController(),
    waker,
    firing,
    // Alerts firing before a restart are re-sent at once (Alertmanager may have expired them meanwhile).
    // what each group notified before a restart: no re-announce, no lost resolve
    schedule: initialSchedule(nowMs(), firing.size > 0, outbox.state() ?? {}),
    stopping: null,
    loop: undefined,
  };
  updateGauge(worker);
  // every series of this sink exists from the start (0), so rate() and increase() see its first event
  for (const outcome of DELIVERY_OUTCOMES) metrics.sinkDeliveries.inc({ ...labels, outcome }, 0);
  metrics.sinkDeadLetters.inc(labels, 0);
  metrics.sinkGroupNotifications.inc(labels, 0);
  metrics.sinkSilenced.inc(labels, 0);
  return {
    get highWater() {
      return outbox.highWater;
    },
    skip: (seq) => outbox.advance(seq),
    enqueue: (event) => enqueue(worker, event),
    forget(fingerprint) {
      firing.delete(fingerprint);
      worker.schedule = { ...worker.schedule, groups: forgetAlert(worker.schedule.groups, fingerprint) };
    },
    start() {
      worker.loop ??= run(worker);
    },
    stop: (deadlineAtMs) => stopWorker(worker, deadlineAtMs),
    status: () => statusOf(worker),
  };
}

/** The sink's outbox, counting its dead letters; `wake` runs when appended entries became durable. */
function openSinkOutbox(
  options: SinkWorkerOptions,
  logger: Logger,
  wake: () => void,
): Promise<Outbox<AlertEvent, GroupsState>> {
  const { metrics } = options;
  const labels = { sink: options.sink.name };
  return openOutbox<AlertEvent, GroupsState>({
    dir: options.outboxDir,
    name: options.sink.name,
    maxEntries: options.policy.maxEntries,
    isPayload: isAlertEvent,
    isState: (value): value is GroupsState =>
      isGroupsState(value, (alert): alert is AlertPayload => isAlertEvent({ type: "alert", seq: 1, alert })),
    seqOf: (event) => event.seq,
    startHighWater: options.startSeq,
    logger,
    nowMs: options.nowMs,
    onDurable: wake,
    onDeadLetter: (count, reason) => {
      metrics.sinkDeadLetters.inc(labels, count);
      if (reason === "overflow")
        metrics.droppedEvents.inc({ component: "chatops", reason: "outbox_full" }, count);
    },
  });
}

/** Take in an alert routed to this sink: append it, and track what is firing when the sink re-sends it. */
function enqueue(worker: Worker, event: AlertEvent): void {
  const { outbox, firing, options } = worker;
  if (worker.stopping !== null || event.seq <= outbox.highWater) return;
  const normalised: AlertEvent = { type: "alert", seq: event.seq, alert: event.alert };
  if (worker.schedulePolicy.resendIntervalMs > 0) {
    const { alert } = event;
    if (
      alert.status === "firing" &&
      (firing.size < options.policy.maxEntries || firing.has(alert.fingerprint))
    )
      firing.set(alert.fingerprint, alert);
    else firing.delete(alert.fingerprint);
  }
  outbox.append(normalised, options.nowMs());
  updateGauge(worker);
}

/** The delivery loop: decide, act (send, sleep, flush), until a stop leaves nothing to do or no time. */
async function run(worker: Worker): Promise<void> {
  for (;;) {
    const action = await step(worker);
    switch (action.kind) {
      case "send":
      case "refresh":
      case "absorb":
        continue;
      case "wait":
        await worker.waker.sleep(action.delayMs);
        continue;
      case "idle":
        await worker.waker.sleep(undefined);
        continue;
      case "flush":
        await worker.outbox.flush(); // appends still being written must be drained too
        continue;
      case "exit":
        return;
    }
  }
}

/** Decide once and carry out its expiry and its attempt; a failure of the loop itself backs off. */
async function step(worker: Worker): Promise<ScheduleAction<Entry>> {
  try {
    const view = viewOf(worker);
    const decision = decideNext(worker.schedule, view, worker.schedulePolicy);
    if (decision.expired.length > 0) {
      await worker.outbox.deadLetter(decision.expired, "max_age", view.nowMs);
      updateGauge(worker);
    }
    worker.schedule = decision.state;
    const { action } = decision;
    if (action.kind === "send" || action.kind === "refresh") await attempt(worker, action, view.nowMs);
    if (action.kind === "absorb") {
      await worker.outbox.ack(action.ids, worker.schedule.groups);
      updateGauge(worker);
    }
    return action;
  } catch (err) {
    worker.logger.error({ err }, "chat-ops loop error");
    const { health, options } = worker;
    const failures = health.consecutiveFailures + 1;
    return waitOrStop(
      sinkRetryDelayMs({ kind: "loop_error" }, failures, options.random(), options.policy),
      viewOf(worker),
    );
  }
}

/** What the scheduler sees now: the durable entries, the rate limit, what is firing, a stop in progress. */
function viewOf(worker: Worker): ScheduleView<Entry> {
  const { outbox, bucket, stopping } = worker;
  const nowMs = worker.options.nowMs();
  const entries = outbox.entries();
  return {
    nowMs,
    entries,
    unwrittenCount: outbox.size - entries.length,
    bucket: { msUntilTokenMs: bucket.msUntilToken(nowMs) },
    firingCount: worker.firing.size,
    stop:
      stopping === null
        ? null
        : { drainUntilMs: stopping.drainUntilMs, aborted: worker.stopController.signal.aborted },
  };
}

/** Take a token, send the action's message, settle the outcome and record it in the outbox. */
async function attempt(
  worker: Worker,
  action: SendAction<Entry> | RefreshAction,
  decidedAtMs: number,
): Promise<void> {
  const { options, outbox, health } = worker;
  worker.bucket.tryTake(decidedAtMs);
  const outcome = await deliverOnce(
    worker,
    actionMessage(worker.schedulePolicy.grouping.mode, action, [...worker.firing.values()]),
    action.deliveryId,
  );
  const facts = {
    nowMs: options.nowMs(),
    consecutiveFailures: health.consecutiveFailures,
    jitter: options.random(),
  };
  const { grouping } = worker.schedulePolicy;
  const settled = settleAttempt(worker.schedule, action, outcome, facts, { ...options.policy, grouping });
  worker.schedule = settled.state;
  if (action.kind === "refresh") return;
  const record = settled.outbox;
  // only grouping sinks keep a group state; the others write the plain tombstones of before
  const groups =
    grouping.mode.kind === "group" && record.kind !== "reschedule" && record.kind !== "none"
      ? record.groups
      : undefined;
  switch (record.kind) {
    case "ack":
      if (grouping.mode.kind === "group") options.metrics.sinkGroupNotifications.inc(worker.labels);
      await outbox.ack(record.ids, groups);
      break;
    case "dead_letter":
      await outbox.deadLetter(record.entries, "rejected", options.nowMs(), groups);
      break;
    case "reschedule":
      await outbox.reschedule(record.entries);
      break;
    case "none":
      break;
  }
  updateGauge(worker);
}

/** Send `message` under `deliveryId`; a finished attempt is recorded in the sink's health. */
async function deliverOnce(
  worker: Worker,
  message: AnyMessage,
  deliveryId: string,
): Promise<DeliveryOutcome> {
  const { options } = worker;
  const target = { sink: options.sink, url: worker.url, stopSignal: worker.stopController.signal };
  const outcome = await sendMessage(options, target, message, deliveryId);
  if (outcome.kind !== "aborted") worker.health.record(outcome);
  return outcome;
}

/** Stop accepting, drain until `deadlineAtMs` (an attempt in flight is aborted then), close the outbox. */
async function stopWorker(worker: Worker, deadlineAtMs: number): Promise<void> {
  const { options, stopController, waker, outbox } = worker;
  worker.stopping = { drainUntilMs: deadlineAtMs };
  if (deadlineAtMs <= options.nowMs()) stopController.abort();
  const abortTimer = options.timers.setTimer(
    () => {
      stopController.abort();
      waker.wake();
    },
    Math.max(0, deadlineAtMs - options.nowMs()),
  );
  await outbox.flush();
  waker.wake();
  try {
    await worker.loop;
  } finally {
    options.timers.clearTimer(abortTimer);
    stopController.abort();
    await outbox.close();
    updateGauge(worker);
  }
}

function statusOf(worker: Worker): SinkStatus {
  const { sink } = worker.options;
  const { health } = worker;
  return {
    name: sink.name,
    kind: sink.kind,
    pending: worker.outbox.size,
    failing: health.failing,
    consecutiveFailures: health.consecutiveFailures,
    lastError: health.lastError,
    running: true,
    groups: Object.keys(worker.schedule.groups).length,
  };
}

function updateGauge(worker: Worker): void {
  const { metrics } = worker.options;
  metrics.sinkOutboxSize.set(worker.labels, worker.outbox.size);
  metrics.sinkGroups.set(worker.labels, Object.keys(worker.schedule.groups).length);
}
