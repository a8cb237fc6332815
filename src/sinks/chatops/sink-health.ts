// Tracks a sink's consecutive failures; raises a `sink_error` alert at the threshold and resolves it on recovery.
import type { Logger } from "pino";
import type { AlertPayload } from "../../domain/events.js";
import type { SinkConfig } from "../../config/types.js";
import { fingerprintOf } from "../../domain/fingerprint.js";
import { outcomeLabel, type FinishedOutcome } from "./delivery.js";

/** What the health tracker needs to know about a failed attempt (never a URL or a secret). */
export interface FailureInfo {
  readonly outcome: string;
  readonly status?: number;
  readonly code?: string;
}

/** Failure bookkeeping of one sink. */
export interface SinkHealth {
  readonly consecutiveFailures: number;
  /** True while a `sink_error` alert is firing for this sink. */
  readonly failing: boolean;
  /** The latest failure since the last success (`outcome [status] [code]`), null when none. */
  readonly lastError: string | null;
  /** Count a failure; `immediate` raises `sink_error` now (a configuration error), whatever the threshold. */
  onFailure(info: FailureInfo, options?: { readonly immediate?: boolean }): void;
  onSuccess(): void;
  /** Count an attempt's verdict: success, failure, or a configuration error (raised at once). */
  record(outcome: FinishedOutcome): void;
}

/** Create the tracker; `raise` publishes the `sink_error` alert (labels {sink, endpoint}). */
export function createSinkHealth(options: {
  readonly sink: SinkConfig;
  readonly host: string;
  readonly raise: (alert: AlertPayload) => void;
  readonly nowMs: () => number;
  /** Already bound to the sink and its `host` (one binding per key: the lines here do not repeat them). */
  readonly logger: Logger;
  /** This sink's `sink_error` alert still firing from before a restart: the next success resolves it. */
  readonly restoredFiring?: AlertPayload;
}): SinkHealth {
  const { sink, host, logger } = options;
  const fingerprint = fingerprintOf("sink_error", sinkErrorLabels(sink));
  const threshold = Math.max(1, sink.failureThreshold);
  let failures = 0;
  let lastError: string | null = null;
  let firing: AlertPayload | undefined =
    options.restoredFiring?.fingerprint === fingerprint ? options.restoredFiring : undefined;

  const publish = (alert: AlertPayload): void => {
    try {
      options.raise(alert);
    } catch (err) {
      logger.error({ err }, "raising sink_error failed");
    }
  };

  const tracker: SinkHealth = {
    get consecutiveFailures() {
      return failures;
    },
    get failing() {
      return firing !== undefined;
    },
    get lastError() {
      return lastError;
    },
    onFailure(info, { immediate = false } = {}) {
      failures += 1;
      lastError = [info.outcome, info.status, info.code].filter((part) => part !== undefined).join(" ");
      // Logged once per burst: the first failure and the threshold at warn, the rest at debug.
      const level = failures === 1 || failures === threshold ? "warn" : "debug";
      logger[level]({ failures, ...info }, "chat-ops delivery failed");
      if (firing !== undefined || (failures < threshold && !immediate)) return;
      firing = sinkErrorFiring(sink, host, { failures, threshold, info, immediate, nowMs: options.nowMs() });
      publish(firing);
    },
    onSuccess() {
      failures = 0;
      lastError = null;
      if (firing === undefined) return;
      const endsAt = new Date(options.nowMs()).toISOString();
      logger.info("chat-ops sink recovered");
      publish({
        ...firing,
        status: "resolved",
        reason: "resolved",
        endsAt,
        summary: `Chat-ops sink ${sink.name} (${sink.kind}) delivers again`,
      });
      firing = undefined;
    },
    record(outcome) {
      if (outcome.kind === "ok") return tracker.onSuccess();
      tracker.onFailure(
        {
          outcome: outcomeLabel(outcome),
          ...(outcome.status === undefined ? {} : { status: outcome.status }),
          ...(outcome.kind === "retry" && outcome.code !== undefined ? { code: outcome.code } : {}),
        },
        // A wrong secret or URL will not fix itself: tell the operator now, not after N more failures.
        { immediate: outcome.kind === "misconfigured" },
      );
    },
  };
  return tracker;
}

/** The labels of a sink's `sink_error` alert. */
function sinkErrorLabels(sink: SinkConfig): Readonly<Record<string, string>> {
  return { sink: sink.name, endpoint: sink.kind };
}

/** The `sink_error` alert raised after `failures` failed deliveries (at once when `immediate`: a config error). */
function sinkErrorFiring(
  sink: SinkConfig,
  host: string,
  at: {
    readonly failures: number;
    readonly threshold: number;
    readonly info: FailureInfo;
    readonly immediate: boolean;
    readonly nowMs: number;
  },
): AlertPayload {
  const { failures, info } = at;
  const labels = sinkErrorLabels(sink);
  const detail = info.status === undefined ? info.outcome : `${info.outcome} ${info.status}`;
  const hint = at.immediate ? "; the receiver refuses our credentials or URL: check the sink's config" : "";
  return {
    fingerprint: fingerprintOf("sink_error", labels),
    status: "firing",
    rule: "sink_error",
    severity: "critical",
    labels,
    summary: `Chat-ops sink ${sink.name} (${sink.kind}) is failing: ${failures} consecutive failed deliveries (last: ${detail})${hint}`,
    value: failures,
    threshold: at.threshold,
    startsAt: new Date(at.nowMs).toISOString(),
    endsAt: null,
    reason: "first",
    context: { host, lastOutcome: info.outcome, lastStatus: info.status ?? null },
  };
}
