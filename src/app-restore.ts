// What a restart carries over: the state directory, the alert engine as the last run left it, and the alerts a
// new run settles (sink errors of sinks no longer configured, the previous run's stall).
import type { AppConfig } from "./config/types.js";
import { isPmError, PmError } from "./domain/errors.js";
import type { AlertPayload } from "./domain/events.js";
import {
  createMonitorState,
  importAlertState,
  restoreAnnounced,
  type MonitorState,
} from "./domain/monitor.js";
import type { EventHub } from "./pipeline/event-hub.js";
import type { RecoveredState, StateStore } from "./state/state-store.js";

/** The alert engine as the last run left it: the checkpoint, then the alerts announced after it (never re-announced). */
export function restoreEngineState(recovered: RecoveredState): MonitorState {
  // an engine that failed validation was logged by the state store and is null here
  const engine = recovered.checkpoint?.engine ?? null;
  return restoreAnnounced(
    engine === null ? createMonitorState() : importAlertState(engine),
    recovered.alertsAfterCheckpoint.map((e) => e.alert),
  );
}

/** Resolve restored `sink_error` alerts whose sink is no longer configured (nothing else ever would). */
export function resolveOrphanSinkErrors(
  hub: EventHub,
  restored: readonly AlertPayload[],
  sinks: AppConfig["sinks"],
  nowMs: number,
): void {
  const configured = new Set(sinks.filter((sink) => sink.enabled).map((sink) => sink.name));
  for (const alert of restored) {
    if (configured.has(alert.labels["sink"] ?? "")) continue;
    hub.publishAlert({
      ...alert,
      status: "resolved",
      reason: "resolved",
      endsAt: new Date(nowMs).toISOString(),
      summary: `Chat-ops sink ${alert.labels["sink"] ?? "?"} is no longer configured`,
      context: { ...alert.context, resolvedBy: "sink_removed" },
    });
  }
}

/** The resolve of a `monitor_stalled` the previous run left firing: this run started, so that stall is over. */
export function stallEndedByRestart(alert: AlertPayload, nowMs: number): AlertPayload {
  return {
    ...alert,
    status: "resolved",
    reason: "resolved",
    value: 0,
    endsAt: new Date(nowMs).toISOString(),
    summary: "pragma-monitor restarted: its earlier stall is over",
    context: { ...alert.context, resolvedBy: "restart" },
  };
}

/** Open the state directory; a file-system failure becomes PM_ERR_STATE naming `state.dir` (the lock's own error passes). */
export function openStateDir(dir: string, open: () => StateStore): StateStore {
  try {
    return open();
  } catch (error) {
    if (isPmError(error)) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new PmError("PM_ERR_STATE", `cannot use the state directory ${dir} (state.dir): ${reason}`, {
      cause: error,
    });
  }
}
