// Samples the event loop, raises and resolves the `monitor_stalled` alert, and tells the pipeline when to hold its verdicts.
import type { Logger } from "pino";
import type { AlertPayload } from "../domain/events.js";
import { fingerprintOf } from "../domain/fingerprint.js";
import {
  holdsVerdict,
  initialLoopStallState,
  quietSample,
  sampleLoop,
  type LoopStallEvent,
  type LoopStallSettings,
} from "../domain/loop-stall.js";
import type { Metrics } from "../metrics.js";

/** The alert's fingerprint: one per daemon (external labels are added by the event hub). */
export const MONITOR_STALLED_FINGERPRINT = fingerprintOf("monitor_stalled", {});

/** The running loop monitor. */
export interface LoopMonitor {
  /** Sample now and answer whether verdicts are held (the pipeline calls it before each evaluation). */
  holding(): boolean;
  stop(): void;
}

export interface LoopMonitorOptions {
  readonly logger: Logger;
  /** Wall clock (a stall is wall time, whatever the market clock does). */
  readonly nowMs: () => number;
  readonly settings: LoopStallSettings;
  readonly publish: (alert: AlertPayload) => void;
  readonly metrics: Pick<Metrics, "loopStalls" | "loopStalled">;
  /** Runs on each on-time sample of the timer (systemd `WATCHDOG=1`: a stalled loop stops the pings). */
  readonly onHealthy?: () => void;
}

/** Start sampling every `settings.sampleIntervalMs`; `stop()` ends it (nothing is published on stop). */
export function createLoopMonitor(options: LoopMonitorOptions): LoopMonitor {
  const { logger, nowMs, settings, metrics } = options;
  let state = initialLoopStallState(nowMs());
  let firing: AlertPayload | undefined;
  metrics.loopStalled.set(0);

  const sample = (): LoopStallEvent => {
    const now = nowMs();
    const next = sampleLoop(state, now, settings);
    state = next.state;
    const { event } = next;
    if (event.kind === "stalled" || event.kind === "stalled_again") {
      metrics.loopStalls.inc();
      logger.error({ lagMs: event.lagMs, holdUntilMs: state.holdUntilMs }, "event loop stalled");
    }
    if (event.kind === "stalled") {
      metrics.loopStalled.set(1);
      firing = stalledAlert(event.lagMs, event.sinceMs, settings.thresholdMs);
      options.publish(firing);
    } else if (event.kind === "recovered") {
      metrics.loopStalled.set(0);
      logger.info({ maxLagMs: event.maxLagMs }, "event loop runs on time again");
      if (firing !== undefined) options.publish(resolvedAlert(firing, event.maxLagMs, now));
      firing = undefined;
    }
    return event;
  };
  const timer = setInterval(() => {
    // any on-time sample pings, also during the hold: the loop runs, only the verdicts wait
    const { kind } = sample();
    if (kind === "on_time" || kind === "recovered") options.onHealthy?.();
  }, settings.sampleIntervalMs);
  timer.unref();
  return {
    holding() {
      // per poll: the common on-time sample records its time only (no event built)
      const quiet = quietSample(state, nowMs(), settings);
      if (quiet === null) sample();
      else state = quiet;
      return holdsVerdict(state, nowMs());
    },
    stop: () => clearInterval(timer),
  };
}

/** The firing `monitor_stalled` alert for a first stall of `lagMs` that began at `sinceMs`. */
export function stalledAlert(lagMs: number, sinceMs: number, thresholdMs: number): AlertPayload {
  return {
    fingerprint: MONITOR_STALLED_FINGERPRINT,
    status: "firing",
    rule: "monitor_stalled",
    severity: "warning",
    labels: {},
    summary: `pragma-monitor itself stalled: its event loop did not run for ${formatSeconds(lagMs)} (threshold ${formatSeconds(thresholdMs)}); data-age and upstream verdicts are held until it runs on time again`,
    value: lagMs,
    threshold: thresholdMs,
    startsAt: new Date(sinceMs).toISOString(),
    endsAt: null,
    reason: "first",
    context: { lagMs },
  };
}

/** The resolve of `firing` once the loop has run on time through the hold. */
function resolvedAlert(firing: AlertPayload, maxLagMs: number, nowMs: number): AlertPayload {
  return {
    ...firing,
    status: "resolved",
    reason: "resolved",
    value: 0,
    endsAt: new Date(nowMs).toISOString(),
    summary: `pragma-monitor runs on time again (longest stall ${formatSeconds(maxLagMs)})`,
    context: { maxLagMs },
  };
}

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
