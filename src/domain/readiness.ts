// The readiness decision of /readyz: a pure function of a small status record (listening, targets' last outcomes, sinks' health).
import { listNames } from "./format.js";

/** What a target's polls have shown so far. */
export type TargetHealth =
  | { readonly kind: "waiting" }
  | { readonly kind: "ok" }
  | {
      readonly kind: "failing";
      /** Error code of the latest failed poll, e.g. `PM_ERR_UPSTREAM_NETWORK`. */
      readonly code: string;
      readonly consecutiveFailures: number;
      /** False when no poll of this target has succeeded since start. */
      readonly everSucceeded: boolean;
    };

/** One monitored target as readiness sees it. */
export interface TargetReadiness {
  readonly id: string;
  readonly health: TargetHealth;
}

/** One enabled chat-ops sink as readiness sees it. */
export interface SinkReadiness {
  readonly name: string;
  readonly kind: string;
  /** False when the sink is configured and enabled but its worker is not running (`lastError` says why). */
  readonly running: boolean;
  /** A `sink_error` alert is firing for this sink. */
  readonly alertFiring: boolean;
  /** Failed deliveries since its last success (0 when the latest delivery succeeded or none was tried). */
  readonly consecutiveFailures: number;
  /** The latest failure, e.g. `http_error 500` or `network ECONNREFUSED`; null when none. */
  readonly lastError: string | null;
}

/** Everything the decision reads. */
export interface ReadinessStatus {
  readonly listening: boolean;
  readonly pipelineStarted: boolean;
  readonly targets: readonly TargetReadiness[];
  readonly sinks: readonly SinkReadiness[];
}

/** Whether the daemon is ready, with every reason it is not (empty when ready). */
export interface Readiness {
  readonly ready: boolean;
  readonly reasons: readonly string[];
}

/** How many names one reason lists before it says "and N more". */
export const READINESS_MAX_NAMES = 5;

/**
 * Ready means: the HTTP server listens, every target's latest poll succeeded, and no enabled sink is
 * failing (a firing `sink_error`, a failed latest delivery, or a worker that is not running). Each
 * failing group is one reason naming its first `maxNames` members and counting the rest.
 */
export function decideReadiness(status: ReadinessStatus, maxNames = READINESS_MAX_NAMES): Readiness {
  const reasons: string[] = [];
  if (!status.listening) reasons.push("HTTP server not listening");
  if (!status.pipelineStarted) reasons.push("pipeline not started");
  const failing: string[] = [];
  const waiting: string[] = [];
  for (const { id, health } of status.targets) {
    if (health.kind === "waiting") waiting.push(id);
    else if (health.kind === "failing") failing.push(`${id} (${describeTargetFailure(health)})`);
  }
  if (failing.length > 0)
    reasons.push(`${failing.length} target(s) failing: ${listNames(failing, maxNames)}`);
  if (waiting.length > 0)
    reasons.push(`${waiting.length} target(s) waiting for their first poll: ${listNames(waiting, maxNames)}`);
  const sinks = status.sinks.filter(isSinkFailing).map((sink) => `${sink.name} (${describeSink(sink)})`);
  if (sinks.length > 0) reasons.push(`${sinks.length} sink(s) failing: ${listNames(sinks, maxNames)}`);
  return { ready: reasons.length === 0, reasons };
}

/** A sink counts against readiness when it is not running, its alert fires, or its latest delivery failed. */
export function isSinkFailing(sink: SinkReadiness): boolean {
  return !sink.running || sink.alertFiring || sink.consecutiveFailures > 0;
}

function describeTargetFailure(health: Extract<TargetHealth, { kind: "failing" }>): string {
  const streak = `${health.consecutiveFailures} consecutive failure(s)`;
  return `${health.code}, ${streak}${health.everSucceeded ? "" : ", no successful poll since start"}`;
}

function describeSink(sink: SinkReadiness): string {
  if (!sink.running) return `${sink.kind}, not running: ${sink.lastError ?? "not started"}`;
  const parts = [sink.kind];
  if (sink.alertFiring) parts.push("sink_error firing");
  if (sink.consecutiveFailures > 0) parts.push(`${sink.consecutiveFailures} consecutive failed deliveries`);
  if (sink.lastError !== null) parts.push(`last error: ${sink.lastError}`);
  return parts.join(", ");
}

/**
 * Whether the daemon itself works, for its dead-man's switches (heartbeat sink, watchdog alert): it
 * listens, its pipeline runs and every target has had its first poll. Unlike readiness, an upstream or
 * sink that fails does not count: the daemon is then doing its job (it raises `upstream_error` or
 * `sink_error`), and silencing the switch would page "the monitor is dead" for the wrong cause.
 */
export function decideSelfHealth(status: ReadinessStatus, maxNames = READINESS_MAX_NAMES): Readiness {
  return decideReadiness(
    {
      ...status,
      targets: status.targets.filter(({ health }) => health.kind === "waiting"),
      sinks: [],
    },
    maxNames,
  );
}
