// The always-firing `watchdog` alert (Alertmanager's Watchdog): firing while the daemon itself works, so its absence downstream means the monitoring is down.
import type { AlertPayload } from "../domain/events.js";
import { fingerprintOf } from "../domain/fingerprint.js";

/** The watchdog's fingerprint: no labels of its own (external labels are added by the event hub). */
export const WATCHDOG_FINGERPRINT = fingerprintOf("watchdog", {});

/** The transition the watchdog makes now, if any (pure; `firing` is the alert it last published as firing). */
export function watchdogTransition(input: {
  readonly enabled: boolean;
  readonly ready: boolean;
  readonly reasons: readonly string[];
  readonly firing: AlertPayload | undefined;
  readonly nowMs: number;
}): AlertPayload | undefined {
  const { enabled, ready, firing, nowMs } = input;
  if (firing === undefined)
    return enabled && ready
      ? {
          fingerprint: WATCHDOG_FINGERPRINT,
          status: "firing",
          rule: "watchdog",
          severity: "info",
          labels: {},
          summary:
            "pragma-monitor is running. This alert always fires: route it to a dead-man's switch, which alerts when it stops arriving.",
          value: null,
          threshold: null,
          startsAt: new Date(nowMs).toISOString(),
          endsAt: null,
          reason: "first",
          context: {},
        }
      : undefined;
  if (enabled && ready) return undefined;
  const why = enabled ? `not ready: ${input.reasons.join("; ") || "unknown"}` : "watchdog disabled";
  return {
    ...firing,
    status: "resolved",
    reason: "resolved",
    endsAt: new Date(nowMs).toISOString(),
    summary: `pragma-monitor watchdog stopped (${why})`,
    context: { stoppedBecause: enabled ? "not_ready" : "disabled" },
  };
}

/** The watchdog's state across checks; `check()` publishes what `watchdogTransition` decides. */
export interface WatchdogAlert {
  check(): void;
}

/** Create the watchdog over the app's self-health and the current config. Nothing is sent on stop, by design. */
export function createWatchdogAlert(options: {
  readonly enabled: () => boolean;
  readonly readiness: () => { readonly ready: boolean; readonly reasons: readonly string[] };
  readonly publish: (alert: AlertPayload) => void;
  readonly nowMs: () => number;
}): WatchdogAlert {
  let firing: AlertPayload | undefined;
  return {
    check() {
      const { ready, reasons } = options.readiness();
      const next = watchdogTransition({
        enabled: options.enabled(),
        ready,
        reasons,
        firing,
        nowMs: options.nowMs(),
      });
      if (next === undefined) return;
      firing = next.status === "firing" ? next : undefined;
      options.publish(next);
    },
  };
}
