// One sink's delivery loop: outbox → rate limit (digest when over it) → HTTP → ack, retry or dead letter.
import type { Dispatcher } from "undici";
import type { Logger } from "pino";
import { childLogger } from "../../logger.js";
import type { AlertSinkConfig, SinkKind } from "../../config/types.js";
import type { AlertEvent, AlertPayload } from "../../domain/events.js";
import type { Metrics } from "../../metrics.js";
import { delayMs, sinkRetryBackoff } from "../../backoff.js";
import { deliver, hostOf, outcomeLabel, type DeliveryOutcome } from "./delivery.js";
import type { Timers } from "../../http-client.js";
import { fnv1a64Hex } from "../../domain/fingerprint.js";
import { openOutbox, type Outbox, type OutboxEntry } from "./outbox.js";
import { isAlertEvent } from "./payload.js";
import { createTokenBucket } from "../../token-bucket.js";
import { endpointUrl, renderFor, supportsDigest } from "./render.js";
import { createSinkHealth } from "./sink-health.js";
import type { AnyMessage } from "./types.js";

/** Retry and sizing policy shared by every sink. */
export interface WorkerPolicy {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** First delay after a 401/403/404/410 (a configuration error), doubled per failure up to `maxDelayMs`. */
  readonly misconfiguredDelayMs: number;
  readonly maxEntries: number;
  readonly maxDigestEntries: number;
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

/** Open the sink's outbox and build its worker (the loop starts with `start()`). */
export async function openSinkWorker(
  options: SinkDeps & {
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
  },
): Promise<SinkWorker> {
  const { sink, metrics, nowMs, timers, policy } = options;
  const host = hostOf(sink.url);
  const logger = childLogger(options.logger, { sink: sink.name, kind: sink.kind, host });
  const labels = { sink: sink.name };
  let wakeFn: (() => void) | undefined;
  let wokenEarly = false; // a wake that arrived while the loop was busy, not sleeping
  const wake = (): void => {
    if (wakeFn === undefined) wokenEarly = true;
    else wakeFn();
  };
  const outbox: Outbox<AlertEvent> = await openOutbox({
    dir: options.outboxDir,
    name: sink.name,
    maxEntries: policy.maxEntries,
    isPayload: isAlertEvent,
    seqOf: (event) => event.seq,
    startHighWater: options.startSeq,
    logger,
    nowMs,
    onDurable: wake,
    onDeadLetter: (count, reason) => {
      metrics.sinkDeadLetters.inc(labels, count);
      if (reason === "overflow")
        metrics.droppedEvents.inc({ component: "chatops", reason: "outbox_full" }, count);
    },
  });
  const restoredFiring = options.ownSinkError;
  const health = createSinkHealth({
    sink,
    host,
    raise: options.raise,
    nowMs,
    logger,
    ...(restoredFiring === undefined ? {} : { restoredFiring }),
  });
  const bucket = createTokenBucket({ ratePerMinute: sink.ratePerMinute, burst: sink.burst, nowMs: nowMs() });
  const url = endpointUrl(sink);
  const stopController = new AbortController();
  const firing = new Map<string, AlertPayload>();
  const resendMs = sink.kind === "alertmanager" ? sink.resendIntervalMs : 0;
  if (resendMs > 0)
    for (const alert of options.firing.slice(0, policy.maxEntries)) firing.set(alert.fingerprint, alert);
  // Alerts firing before a restart are re-sent at once (Alertmanager may have expired them meanwhile).
  let lastRefreshAtMs = firing.size > 0 ? Number.NEGATIVE_INFINITY : nowMs();
  let blockedUntilMs = 0;
  let throttled = false;
  let stopping = false;
  let drainUntilMs = Number.POSITIVE_INFINITY;
  let loop: Promise<void> | undefined;

  const updateGauge = (): void => metrics.sinkOutboxSize.set(labels, outbox.size);
  const sleep = (delayMs: number | undefined): Promise<void> =>
    new Promise((resolve) => {
      if (wokenEarly) {
        wokenEarly = false;
        resolve();
        return;
      }
      const handle = delayMs === undefined ? undefined : timers.setTimer(() => done(), Math.max(0, delayMs));
      const done = (): void => {
        if (handle !== undefined) timers.clearTimer(handle);
        wakeFn = undefined;
        resolve();
      };
      wakeFn = done;
    });

  /** Send `message`; returns the outcome after metrics, health and backoff bookkeeping. */
  const attempt = async (message: AnyMessage, deliveryId: string): Promise<DeliveryOutcome> => {
    const rendered = renderFor(sink, message, {
      nowMs: nowMs(),
      deliveryId,
      ...(options.generatorUrl === undefined ? {} : { generatorUrl: options.generatorUrl }),
    });
    const startedAtMs = nowMs();
    const outcome = await deliver({
      dispatcher: options.dispatcher,
      url,
      rendered,
      timeoutMs: sink.timeoutMs,
      timers,
      nowMs,
      stopSignal: stopController.signal,
    });
    if (outcome.kind === "aborted") return outcome;
    metrics.sinkDeliveryDuration.observe(labels, (nowMs() - startedAtMs) / 1000);
    metrics.sinkDeliveries.inc({ ...labels, outcome: outcomeLabel(outcome) });
    health.record(outcome);
    if (outcome.kind === "ok") {
      blockedUntilMs = 0;
      return outcome;
    }
    const misconfigured = outcome.kind === "misconfigured";
    const retryAfterMs = outcome.kind === "retry" ? outcome.retryAfterMs : undefined;
    const backoff = misconfigured ? { ...policy, baseDelayMs: policy.misconfiguredDelayMs } : policy;
    const waitMs = delayMs(
      sinkRetryBackoff(backoff),
      health.consecutiveFailures,
      options.random,
      retryAfterMs,
    );
    blockedUntilMs = nowMs() + waitMs;
    return outcome;
  };

  /**
   * What to send next: a digest already attempted (the same entries under the same delivery id, so its
   * retries are the same message), else a new digest of what the rate limit made wait, else the oldest entry.
   */
  const nextBatch = (
    ready: readonly OutboxEntry<AlertEvent>[],
  ): { readonly batch: readonly OutboxEntry<AlertEvent>[]; readonly deliveryId: string } => {
    const pendingId = ready.find((entry) => entry.deliveryId !== undefined)?.deliveryId;
    if (pendingId !== undefined)
      return { batch: ready.filter((entry) => entry.deliveryId === pendingId), deliveryId: pendingId };
    if (throttled && ready.length > 1 && supportsDigest(sink)) {
      const batch = ready.slice(0, policy.maxDigestEntries);
      return { batch, deliveryId: `digest-${fnv1a64Hex(batch.map((entry) => entry.id).join(","))}` };
    }
    const head = ready.slice(0, 1);
    return { batch: head, deliveryId: head[0]?.id ?? "" };
  };

  /** Deliver the oldest entry, or a digest of all pending ones when the rate limit made them wait. */
  const sendEntries = async (ready: readonly OutboxEntry<AlertEvent>[]): Promise<void> => {
    const { batch, deliveryId } = nextBatch(ready);
    const digest = deliveryId.startsWith("digest-");
    const ids = batch.map((entry) => entry.id);
    const message: AnyMessage = digest
      ? { kind: "digest", events: batch.map((entry) => entry.payload) }
      : { kind: "alert", event: (batch[0] as OutboxEntry<AlertEvent>).payload };
    // More waiting than the bucket has left: they will wait for tokens, so the next send is a digest.
    if (!digest && ready.length - 1 > bucket.available(nowMs())) throttled = true;
    const outcome = await attempt(message, deliveryId);
    if (outcome.kind === "ok") {
      if (digest) {
        metrics.sinkDigests.inc(labels);
        throttled = false;
      }
      await outbox.ack(ids);
    } else if (outcome.kind === "rejected") {
      await outbox.deadLetter(batch, "rejected", nowMs());
    } else if (outcome.kind === "retry" || outcome.kind === "misconfigured") {
      await outbox.reschedule(
        batch.map((entry) => ({
          ...entry,
          attempts: entry.attempts + 1,
          nextAttemptAtMs: blockedUntilMs,
          ...(digest ? { deliveryId } : {}),
        })),
      );
    }
    updateGauge();
  };

  /** One scheduling decision: returns how long to wait (undefined = until woken) or 0 to go again. */
  const step = async (): Promise<number | undefined> => {
    const now = nowMs();
    if (sink.maxAgeMs > 0) {
      const expired = outbox.entries().filter((entry) => now - entry.createdAtMs >= sink.maxAgeMs);
      if (expired.length > 0) {
        await outbox.deadLetter(expired, "max_age", now);
        updateGauge();
      }
    }
    const ready = outbox.entries();
    const head = ready[0];
    const refreshDue = !stopping && firing.size > 0 && now - lastRefreshAtMs >= resendMs;
    if (head === undefined && !refreshDue) {
      throttled = false;
      return stopping || firing.size === 0 ? undefined : lastRefreshAtMs + resendMs - now;
    }
    const expiresInMs =
      head === undefined ? Number.POSITIVE_INFINITY : head.createdAtMs + sink.maxAgeMs - now;
    const waitMs = Math.max(
      blockedUntilMs - now,
      head === undefined ? 0 : head.nextAttemptAtMs - now,
      bucket.msUntilToken(now),
    );
    if (waitMs > 0) {
      if (bucket.msUntilToken(now) > 0 && head !== undefined) throttled = true;
      return sink.maxAgeMs > 0 ? Math.min(waitMs, Math.max(1, expiresInMs)) : waitMs;
    }
    bucket.tryTake(now);
    if (refreshDue) {
      const outcome = await attempt({ kind: "refresh", alerts: [...firing.values()] }, `refresh-${now}`);
      if (outcome.kind === "ok" || outcome.kind === "rejected") lastRefreshAtMs = now;
      return 0;
    }
    await sendEntries(ready);
    return 0;
  };

  const run = async (): Promise<void> => {
    for (;;) {
      if (stopping && nowMs() >= drainUntilMs) return;
      let waitMs: number | undefined;
      try {
        waitMs = await step();
      } catch (err) {
        logger.error({ err }, "chat-ops loop error");
        waitMs = delayMs(sinkRetryBackoff(policy), health.consecutiveFailures + 1, options.random);
      }
      if (waitMs === 0) continue;
      if (stopping && waitMs === undefined && outbox.size > outbox.entries().length) {
        await outbox.flush(); // appends still being written must be drained too
        continue;
      }
      if (
        stopping &&
        (waitMs === undefined || nowMs() + waitMs >= drainUntilMs || stopController.signal.aborted)
      )
        return;
      await sleep(waitMs);
    }
  };

  updateGauge();
  // every series of this sink exists from the start (0), so rate() and increase() see its first event
  for (const outcome of DELIVERY_OUTCOMES) metrics.sinkDeliveries.inc({ ...labels, outcome }, 0);
  metrics.sinkDeadLetters.inc(labels, 0);
  metrics.sinkDigests.inc(labels, 0);
  return {
    get highWater() {
      return outbox.highWater;
    },
    skip(seq) {
      outbox.advance(seq);
    },
    enqueue(event) {
      if (stopping || event.seq <= outbox.highWater) return;
      const normalised: AlertEvent = { type: "alert", seq: event.seq, alert: event.alert };
      if (resendMs > 0) {
        if (
          event.alert.status === "firing" &&
          (firing.size < policy.maxEntries || firing.has(event.alert.fingerprint))
        )
          firing.set(event.alert.fingerprint, event.alert);
        else firing.delete(event.alert.fingerprint);
      }
      outbox.append(normalised, nowMs());
      updateGauge();
    },
    forget(fingerprint) {
      firing.delete(fingerprint);
    },
    start() {
      loop ??= run();
    },
    async stop(deadlineAtMs) {
      stopping = true;
      drainUntilMs = deadlineAtMs;
      if (deadlineAtMs <= nowMs()) stopController.abort();
      const abortTimer = timers.setTimer(
        () => {
          stopController.abort();
          wake();
        },
        Math.max(0, deadlineAtMs - nowMs()),
      );
      await outbox.flush();
      wake();
      try {
        await loop;
      } finally {
        timers.clearTimer(abortTimer);
        stopController.abort();
        await outbox.close();
        updateGauge();
      }
    },
    status: () => ({
      name: sink.name,
      kind: sink.kind,
      pending: outbox.size,
      failing: health.failing,
      consecutiveFailures: health.consecutiveFailures,
      lastError: health.lastError,
      running: true,
    }),
  };
}
