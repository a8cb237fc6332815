// Cluster notifications: one durable pull consumer of the events stream per alert sink, shared by every member, so
// each event is notified once per sink: acknowledged after the sink accepted it, redelivered after the backoff or the
// receiver's Retry-After (nak with a delay), dead-lettered after `maxAgeMs` into the sink's own stream.
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import type { AlertSinkConfig, ClusterConfig } from "../config/types.js";
import type { AlertEvent, AlertPayload } from "../domain/events.js";
import type { Timers } from "../http-client.js";
import { childLogger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import { hostOf, type DeliveryOutcome } from "../sinks/chatops/delivery.js";
import { sendMessage } from "../sinks/chatops/send.js";
import type { AnyMessage } from "../sinks/chatops/types.js";
import { endpointUrl } from "../sinks/chatops/render.js";
import { createSinkHealth, type SinkHealth } from "../sinks/chatops/sink-health.js";
import type { SinkStatus, WorkerPolicy } from "../sinks/chatops/sink-worker.js";
import { schedulePolicyOf, type SchedulePolicy } from "../sinks/chatops/sink-schedule.js";
import { natsConnectOptions } from "./nats-connect.js";
import { eventOfMessage } from "./journal-log.js";
import { feedShared, runGroupLoop, sharesGroups, type GroupLoopContext } from "./sink-group-loop.js";
import { SINK_GROUPS_BUCKET } from "./sink-groups.js";
import { EVENTS_STREAM, EVENTS_SUBJECT } from "./journal-stream.js";
import {
  deadLetterStream,
  messageStep,
  parseRateState,
  settle,
  sinkConsumerName,
  takeToken,
  type Settlement,
} from "./sink-delivery.js";

/** The KV bucket holding each sink's token bucket (key: the sink's consumer name), shared by the members. */
export const SINK_RATE_BUCKET = "pm_sink_rate";
/** Wait between retries of a failed connect or a failed consumer; how long one pull waits for a message. */
const RETRY_MS = 500;
const PULL_EXPIRES_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
/**
 * Beyond the sink's own timeout, how long a member may hold a message before the server redelivers it to
 * another member (the clock restarts just before the request, so this covers the acknowledgement).
 */
const ACK_WAIT_MARGIN_MS = 2_000;
/** Dead letters kept per sink (the oldest discarded). */
const DEAD_LETTERS_KEPT = 10_000;
const ENCODER = new TextEncoder();
/** Compare-and-set attempts on a sink's token bucket before the pull loop backs off. */
const TOKEN_ATTEMPTS = 5;
/** How long a `sink_error` this member raised may take to come back from the cluster's log. */
const SINK_ERROR_ROUND_TRIP_MS = 10_000;
/** Largest shared group state of a sink (a KV value is at most the server's max payload, 1 MiB by default). */
const GROUP_STATE_MAX_BYTES = 512 * 1024;
/** When a message left in the stream for want of room in the group state is offered again. */
const FULL_RETRY_MS = 1_000;

/** What the sink consumers need from the daemon. */
export interface SinkConsumersDeps {
  readonly config: ClusterConfig;
  readonly dispatcher: Dispatcher;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Publishes `sink_error` alerts (and their resolves) on the bus. */
  readonly raise: (alert: AlertPayload) => void;
  /** The alerts firing in the cluster (this member's hub is fed from the shared log). */
  readonly activeAlerts: () => readonly AlertPayload[];
  readonly nowMs: () => number;
  readonly random: () => number;
  readonly timers: Timers;
  readonly policy: WorkerPolicy;
  readonly generatorUrl?: (fingerprint: string) => string;
}

/** This member's share of delivering to the alert sinks. */
export interface SinkConsumers {
  /** Start pulling for `sinks` (heartbeats are ignored: each member pings on its own). */
  start(sinks: readonly AlertSinkConfig[]): void;
  /** Apply a new sink list: unchanged sinks keep pulling, removed or changed ones stop, new ones start. */
  reconfigure(sinks: readonly AlertSinkConfig[]): Promise<void>;
  /** Stop pulling (a delivery in flight is aborted and its message redelivered), close the connection. */
  stop(): Promise<void>;
  status(): readonly SinkStatus[];
}

type DeadLetterReason = "rejected" | "max_age";

/** One sink's pull loop and what it knows about the sink. */
interface SinkLoop {
  readonly sink: AlertSinkConfig;
  readonly logger: Logger;
  readonly url: string;
  readonly abort: AbortController;
  health: SinkHealth;
  /** When this member last raised the sink's `sink_error` (ms; -Infinity when never). */
  raisedAtMs: number;
  /** Messages the stream holds for this consumer beyond the one in hand (as of the latest pull). */
  pending: number;
  /** A grouping sink's shared state and scheduler (once connected); undefined for one notified per event. */
  group: GroupLoopContext | undefined;
  /** Notification groups in the shared state as last written or read here. */
  groups: number;
  stopped: boolean;
  done: Promise<void> | undefined;
}

/** The NATS side, once connected. */
interface Nats {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly rates: KV;
  readonly groups: KV;
}

interface Consumers {
  readonly deps: SinkConsumersDeps;
  readonly loops: SinkLoop[];
  nats: Promise<Nats | undefined> | undefined;
  stopped: boolean;
}

/** The sink consumers of a cluster member; nothing talks to NATS until `start()`. */
export function createSinkConsumers(deps: SinkConsumersDeps): SinkConsumers {
  const set: Consumers = { deps, loops: [], nats: undefined, stopped: false };
  return {
    start(sinks) {
      set.nats = connectUntilStopped(set);
      for (const sink of sinks) startLoop(set, sink);
    },
    async reconfigure(sinks) {
      const wanted = new Map(sinks.map((sink) => [sink.name, JSON.stringify(sink)]));
      const retired = set.loops.filter((loop) => wanted.get(loop.sink.name) !== JSON.stringify(loop.sink));
      await Promise.all(retired.map((loop) => stopLoop(set, loop)));
      const running = new Set(set.loops.map((loop) => loop.sink.name));
      for (const sink of sinks) if (!running.has(sink.name)) startLoop(set, sink);
    },
    async stop() {
      set.stopped = true;
      await Promise.all([...set.loops].map((loop) => stopLoop(set, loop)));
      const nats = await set.nats;
      await nats?.nc.close();
    },
    status: () => set.loops.map(statusOf),
  };
}

function startLoop(set: Consumers, sink: AlertSinkConfig): void {
  const { deps } = set;
  const logger = childLogger(deps.logger, { sink: sink.name, kind: sink.kind, host: hostOf(sink.url) });
  const loop: SinkLoop = {
    sink,
    logger,
    url: endpointUrl(sink),
    abort: new AbortController(),
    // raised here: the closure runs after `loop` exists
    health: healthOf(deps, sink, logger, undefined, () => {
      loop.raisedAtMs = deps.nowMs();
    }),
    raisedAtMs: Number.NEGATIVE_INFINITY,
    pending: 0,
    group: undefined,
    groups: 0,
    stopped: false,
    done: undefined,
  };
  set.loops.push(loop);
  const labels = { sink: sink.name };
  for (const outcome of ["ok", "rejected", "http_error", "rate_limited", "timeout", "network"])
    deps.metrics.sinkDeliveries.inc({ ...labels, outcome }, 0);
  deps.metrics.sinkDeadLetters.inc(labels, 0);
  deps.metrics.sinkSilenced.inc(labels, 0);
  deps.metrics.sinkGroupNotifications.inc(labels, 0);
  loop.done = runLoop(set, loop).catch((error: unknown) =>
    logger.error({ err: error }, "cluster sink consumer stopped"),
  );
}

async function stopLoop(set: Consumers, loop: SinkLoop): Promise<void> {
  loop.stopped = true;
  loop.abort.abort();
  await loop.done;
  set.loops.splice(set.loops.indexOf(loop), 1);
}

/** Run the sink's pull loop, and its group scheduler when it groups. */
async function runLoop(set: Consumers, loop: SinkLoop): Promise<void> {
  const nats = await set.nats;
  if (nats === undefined) return;
  const schedulePolicy = schedulePolicyOf(loop.sink, set.deps.policy);
  if (!sharesGroups(schedulePolicy)) return pullLoop(set, nats, loop);
  loop.group = groupContext(set.deps, nats, loop, schedulePolicy);
  await Promise.all([pullLoop(set, nats, loop), runGroupLoop(loop.group)]);
}

/** Pull the sink's messages one at a time until stopped; a failing consumer is re-opened after a pause. */
async function pullLoop(set: Consumers, nats: Nats, loop: SinkLoop): Promise<void> {
  let failing = false;
  while (!loop.stopped) {
    try {
      const consumer = await ensureConsumer(set.deps, nats, loop.sink);
      while (!loop.stopped) {
        const msg = await consumer.next({ expires: PULL_EXPIRES_MS });
        if (failing) loop.logger.info("cluster sink consumer: pulling again");
        failing = false;
        if (msg !== null) await handle(set.deps, nats, loop, msg);
      }
    } catch (error) {
      if (loop.stopped) return;
      if (!failing) loop.logger.error({ err: error }, "cluster sink consumer failed, retrying");
      failing = true;
      await sleep(RETRY_MS);
    }
  }
}

/**
 * The sink's durable consumer (created by whichever member comes first, the others bind to it): explicit acks,
 * one message in flight for the whole cluster (so the sink gets its notifications in journal order, and a
 * message waiting for its redelivery holds the ones behind it), new events only, unlimited redeliveries (the
 * dead letter after `maxAgeMs` ends them), and the stream for its dead letters.
 */
async function ensureConsumer(deps: SinkConsumersDeps, nats: Nats, sink: AlertSinkConfig) {
  const name = sinkConsumerName(sink.name);
  const ackWaitNs = (sink.timeoutMs + ACK_WAIT_MARGIN_MS) * 1_000_000;
  const existing = await nats.jsm.consumers.info(EVENTS_STREAM, name).catch(() => undefined);
  if (existing === undefined)
    await nats.jsm.consumers.add(EVENTS_STREAM, {
      durable_name: name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.New,
      filter_subject: EVENTS_SUBJECT,
      ack_wait: ackWaitNs,
      max_ack_pending: 1,
      max_deliver: -1,
    });
  else if (existing.config.ack_wait !== ackWaitNs)
    await nats.jsm.consumers.update(EVENTS_STREAM, name, { ack_wait: ackWaitNs });
  const dead = deadLetterStream(sink.name);
  const stream = await nats.jsm.streams.info(dead.stream).catch(() => undefined);
  if (stream === undefined)
    await nats.jsm.streams.add({
      name: dead.stream,
      subjects: [dead.subject],
      storage: StorageType.File,
      num_replicas: deps.config.nats.replicas,
      max_msgs: DEAD_LETTERS_KEPT,
      discard: DiscardPolicy.Old,
    });
  return nats.js.consumers.get(EVENTS_STREAM, name);
}

/** Skip, dead-letter or deliver one message, and settle it with the server. */
async function handle(deps: SinkConsumersDeps, nats: Nats, loop: SinkLoop, msg: JsMsg): Promise<void> {
  loop.pending = msg.info.pending;
  const ageMs = deps.nowMs() - msg.time.getTime();
  const event = eventOfMessage(msg.string(), msg.seq);
  const step = messageStep(event, loop.sink, ageMs);
  if (loop.group !== undefined && step.kind !== "dead_letter" && event?.type === "alert")
    return feedMessage(loop.group, msg, event);
  if (step.kind === "skip") {
    if (step.muted) deps.metrics.sinkSilenced.inc({ sink: loop.sink.name });
    return void (await msg.ackAck({ timeout: REQUEST_TIMEOUT_MS }));
  }
  if (step.kind === "dead_letter") return deadLetter(deps, nats, loop, msg, step.event, "max_age");
  const waitMs = await takeClusterToken(deps, nats, loop.sink);
  if (waitMs > 0) return msg.nak(waitMs);
  msg.working(); // the ack wait counts from here: the request's timeout plus the margin
  const outcome = await deliverEvent(deps, loop, step.event);
  syncHealth(deps, loop);
  if (outcome.kind !== "aborted") loop.health.record(outcome);
  const settlement: Settlement = settle(
    outcome,
    {
      ageMs: deps.nowMs() - msg.time.getTime(),
      maxAgeMs: loop.sink.maxAgeMs,
      consecutiveFailures: loop.health.consecutiveFailures,
      jitter: deps.random(),
    },
    deps.policy,
  );
  switch (settlement.kind) {
    case "ack":
      return void (await msg.ackAck({ timeout: REQUEST_TIMEOUT_MS }));
    case "nak":
      return msg.nak(settlement.delayMs);
    case "dead_letter":
      return deadLetter(deps, nats, loop, msg, step.event, settlement.reason);
  }
}

/** Take a grouping sink's message into the shared state, then acknowledge it (or leave it while there is no room). */
async function feedMessage(group: GroupLoopContext, msg: JsMsg, event: AlertEvent): Promise<void> {
  const limits = {
    maxEntries: group.policy.maxEntries,
    maxBytes: GROUP_STATE_MAX_BYTES,
    resends: group.schedulePolicy.resendIntervalMs > 0,
  };
  const fed = await feedShared(group, event, msg.time.getTime(), limits);
  if (fed === "full") return msg.nak(FULL_RETRY_MS);
  await msg.ackAck({ timeout: REQUEST_TIMEOUT_MS });
}

/** The scheduler context of a grouping sink on this member. */
function groupContext(
  deps: SinkConsumersDeps,
  nats: Nats,
  loop: SinkLoop,
  schedulePolicy: SchedulePolicy,
): GroupLoopContext {
  return {
    sink: loop.sink,
    key: sinkConsumerName(loop.sink.name),
    kv: nats.groups,
    memberId: deps.config.memberId,
    schedulePolicy,
    policy: deps.policy,
    claimMarginMs: ACK_WAIT_MARGIN_MS,
    logger: loop.logger,
    metrics: deps.metrics,
    nowMs: deps.nowMs,
    random: deps.random,
    timers: deps.timers,
    stopSignal: loop.abort.signal,
    send: async (message, deliveryId) => {
      const target = { sink: loop.sink, url: loop.url, stopSignal: loop.abort.signal };
      const outcome = await sendMessage(deps, target, message, deliveryId);
      syncHealth(deps, loop);
      if (outcome.kind !== "aborted") loop.health.record(outcome);
      return outcome;
    },
    takeToken: () => takeClusterToken(deps, nats, loop.sink),
    deadLetter: async (events, reason) => {
      for (const event of events) await publishDeadLetter(deps, nats, loop, event, reason);
      loop.logger.warn(
        { seqs: events.map((event) => event.seq), reason },
        "cluster: notifications dead-lettered",
      );
    },
    consecutiveFailures: () => loop.health.consecutiveFailures,
    onState: (state) => {
      loop.groups = Object.keys(state.groups).length;
      loop.pending = state.entries.length;
    },
  };
}

/** Send the event to the sink alone (a batch of one for Alertmanager), its seq as the idempotency key. */
function deliverEvent(deps: SinkConsumersDeps, loop: SinkLoop, event: AlertEvent): Promise<DeliveryOutcome> {
  const target = { sink: loop.sink, url: loop.url, stopSignal: loop.abort.signal };
  const message: AnyMessage =
    loop.sink.kind === "alertmanager" ? { kind: "batch", events: [event] } : { kind: "alert", event };
  return sendMessage(deps, target, message, String(event.seq));
}

/** Keep the message as the sink's dead letter (de-duplicated by its seq), then end its deliveries. */
async function deadLetter(
  deps: SinkConsumersDeps,
  nats: Nats,
  loop: SinkLoop,
  msg: JsMsg,
  event: AlertEvent,
  reason: DeadLetterReason,
): Promise<void> {
  await publishDeadLetter(deps, nats, loop, event, reason);
  msg.term(); // no reason: nats-server 2.9 does not take "+TERM <reason>" as a term (it redelivers)
  loop.logger.warn({ seq: msg.seq, reason }, "cluster: notification dead-lettered");
}

/** Publish an event to the sink's dead-letter stream, its seq as the message id (a repeat is dropped). */
async function publishDeadLetter(
  deps: SinkConsumersDeps,
  nats: Nats,
  loop: SinkLoop,
  event: AlertEvent,
  reason: DeadLetterReason,
): Promise<void> {
  const { subject } = deadLetterStream(loop.sink.name);
  const letter = { sink: loop.sink.name, reason, deadAtMs: deps.nowMs(), event };
  await nats.js.publish(subject, JSON.stringify(letter), {
    msgID: String(event.seq),
    timeout: REQUEST_TIMEOUT_MS,
  });
  deps.metrics.sinkDeadLetters.inc({ sink: loop.sink.name });
}

/** Take a token from the sink's bucket in KV (compare-and-set); how long to wait when there is none. */
async function takeClusterToken(deps: SinkConsumersDeps, nats: Nats, sink: AlertSinkConfig): Promise<number> {
  const key = sinkConsumerName(sink.name);
  for (let attempt = 1; ; attempt++) {
    const entry = await nats.rates.get(key);
    const stored = entry === null || entry.operation !== "PUT" ? undefined : entry.string();
    const nowMs = deps.nowMs();
    const taken = takeToken(parseRateState(stored), nowMs, sink);
    if (taken.waitMs > 0) return taken.waitMs;
    const value = ENCODER.encode(JSON.stringify(taken.state));
    try {
      if (entry === null) await nats.rates.create(key, value);
      else await nats.rates.update(key, value, entry.revision);
      return 0;
    } catch (error) {
      // another member took a token meanwhile: read again (a few times; beyond that NATS itself fails)
      if (attempt >= TOKEN_ATTEMPTS) throw error;
    }
  }
}

/**
 * `sink_error` is the cluster's (the member that delivers counts the failures): take over one another member
 * raised, so this one resolves it on success; forget one another member resolved (one this member raised
 * lately may not be back from the log yet: kept).
 */
function syncHealth(deps: SinkConsumersDeps, loop: SinkLoop): void {
  const firing = deps
    .activeAlerts()
    .find((alert) => alert.rule === "sink_error" && alert.labels["sink"] === loop.sink.name);
  if ((firing !== undefined) === loop.health.failing) return;
  if (firing === undefined && deps.nowMs() - loop.raisedAtMs < SINK_ERROR_ROUND_TRIP_MS) return;
  loop.health = healthOf(deps, loop.sink, loop.logger, firing, () => {
    loop.raisedAtMs = deps.nowMs();
  });
}

/** The sink's failure tracker; `onRaise` is told when it raises `sink_error`. */
function healthOf(
  deps: SinkConsumersDeps,
  sink: AlertSinkConfig,
  logger: Logger,
  firing: AlertPayload | undefined,
  onRaise: () => void,
): SinkHealth {
  return createSinkHealth({
    sink,
    host: hostOf(sink.url),
    raise: (alert) => {
      if (alert.status === "firing") onRaise();
      deps.raise(alert);
    },
    nowMs: deps.nowMs,
    logger,
    ...(firing === undefined ? {} : { restoredFiring: firing }),
  });
}

/** Connect and open the rate bucket, retried until it works or the consumers stop. */
async function connectUntilStopped(set: Consumers): Promise<Nats | undefined> {
  const { nats } = set.deps.config;
  let logged = false;
  while (!set.stopped) {
    try {
      const nc = await connect(
        natsConnectOptions(nats, `${set.deps.config.memberId} sinks`, REQUEST_TIMEOUT_MS),
      );
      const rates = await new Kvm(nc)
        .create(SINK_RATE_BUCKET, { history: 1, replicas: nats.replicas, timeout: REQUEST_TIMEOUT_MS })
        .catch(async (error: unknown) => {
          await nc.close();
          throw error;
        });
      const opts = { timeout: REQUEST_TIMEOUT_MS };
      const groups = await new Kvm(nc).create(SINK_GROUPS_BUCKET, {
        history: 1,
        replicas: nats.replicas,
        timeout: REQUEST_TIMEOUT_MS,
      });
      return { nc, js: jetstream(nc, opts), jsm: await jetstreamManager(nc, opts), rates, groups };
    } catch (error) {
      if (!logged) set.deps.logger.error({ err: error }, "cluster sinks: NATS not reachable, retrying");
      logged = true;
      await sleep(RETRY_MS);
    }
  }
  return undefined;
}

function statusOf(loop: SinkLoop): SinkStatus {
  const { sink, health } = loop;
  return {
    name: sink.name,
    kind: sink.kind,
    pending: loop.pending,
    failing: health.failing,
    consecutiveFailures: health.consecutiveFailures,
    lastError: health.lastError,
    running: true,
    groups: loop.groups,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
