// Dead-man's switch sink: pings a URL every `intervalMs` while the daemon itself works; failing pings raise sink_error.
import { childLogger } from "../../logger.js";
import type { HeartbeatSinkConfig } from "../../config/types.js";
import type { AlertPayload } from "../../domain/events.js";
import { deliver, hostOf, outcomeLabel } from "./delivery.js";
import { createSinkHealth } from "./sink-health.js";
import type { SinkDeps, SinkStatus } from "./sink-worker.js";

/** How often readiness is checked before the daemon was ready for the first time. */
const FIRST_READY_CHECK_MS = 1_000;

/** A running heartbeat. */
export interface Heartbeat {
  start(): void;
  /** Stop pinging (no farewell ping: the monitoring service notices the silence, as it should). */
  stop(): Promise<void>;
  status(): SinkStatus;
}

/** What a tick does, decided from readiness alone (table-tested). */
export type HeartbeatAction =
  { readonly kind: "ping"; readonly url: string } | { readonly kind: "wait"; readonly delayMs: number };

/**
 * Ping `url` while ready; once the daemon has been ready, ping `failUrl` (when set) while it is not; before
 * it was ever ready (first polls still running) send nothing and look again soon.
 */
export function heartbeatAction(
  sink: Pick<HeartbeatSinkConfig, "url" | "failUrl" | "intervalMs">,
  ready: boolean,
  wasReady: boolean,
): HeartbeatAction {
  if (ready) return { kind: "ping", url: sink.url };
  if (!wasReady) return { kind: "wait", delayMs: Math.min(FIRST_READY_CHECK_MS, sink.intervalMs) };
  if (sink.failUrl !== "") return { kind: "ping", url: sink.failUrl };
  return { kind: "wait", delayMs: sink.intervalMs };
}

/** Build a heartbeat; nothing is sent until `start()`. */
export function createHeartbeat(
  options: SinkDeps & {
    readonly sink: HeartbeatSinkConfig;
    /** Whether the daemon itself works (the app's self-health, narrower than readiness). */
    readonly isHealthy: () => boolean;
    /** This sink's `sink_error` still firing from before a restart: the next good ping resolves it. */
    readonly ownSinkError?: AlertPayload | undefined;
  },
): Heartbeat {
  const { sink, metrics, nowMs, timers } = options;
  const host = hostOf(sink.url);
  const logger = childLogger(options.logger, { sink: sink.name, kind: sink.kind, host });
  const health = createSinkHealth({
    sink,
    host,
    raise: options.raise,
    nowMs,
    logger,
    ...(options.ownSinkError === undefined ? {} : { restoredFiring: options.ownSinkError }),
  });
  const stopController = new AbortController();
  let timer: unknown;
  let wasReady = false;
  let inFlight: Promise<void> | undefined;

  const schedule = (delayMs: number): void => {
    if (stopController.signal.aborted) return;
    timer = timers.setTimer(() => {
      inFlight = tick();
    }, delayMs);
  };

  const tick = async (): Promise<void> => {
    const ready = options.isHealthy();
    wasReady ||= ready;
    const action = heartbeatAction(sink, ready, wasReady);
    if (action.kind === "wait") return schedule(action.delayMs);
    const startedAtMs = nowMs();
    const outcome = await deliver({
      dispatcher: options.dispatcher,
      url: action.url,
      method: sink.method,
      rendered: { body: "", headers: {} },
      timeoutMs: sink.timeoutMs,
      timers,
      nowMs,
      stopSignal: stopController.signal,
    });
    if (outcome.kind === "aborted") return;
    metrics.sinkDeliveries.inc({ sink: sink.name, outcome: outcomeLabel(outcome) });
    health.record(outcome);
    // A fixed schedule: the next ping is one interval after this one started, whatever it cost.
    schedule(Math.max(0, startedAtMs + sink.intervalMs - nowMs()));
  };

  return {
    start() {
      if (timer === undefined) schedule(0);
    },
    async stop() {
      stopController.abort();
      if (timer !== undefined) timers.clearTimer(timer);
      await inFlight;
    },
    status: () => ({
      name: sink.name,
      kind: sink.kind,
      pending: 0,
      failing: health.failing,
      consecutiveFailures: health.consecutiveFailures,
      lastError: health.lastError,
      running: true,
      groups: 0,
    }),
  };
}
