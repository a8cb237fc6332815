// The daemon's state at start (state directory, engine, silences, the hub over the journal) and its periodic upkeep.
import { createClusterJournal } from "./cluster/journal-stream.js";
import { clusterSilencerOptions } from "./cluster/cluster-shared.js";
import { activeAlerts, createMonitorState, exportAlertState } from "./domain/monitor.js";
import { createEventHub, type EventHub } from "./pipeline/event-hub.js";
import { createWatchdogAlert } from "./pipeline/watchdog-alert.js";
import { createSilencer } from "./pipeline/silencer.js";
import { silenceFilePath } from "./state/silence-file.js";
import { firingAlertsOfRule, firingSinkErrors } from "./state/sink-errors.js";
import { openStateStore } from "./state/state-store.js";
import { openStateDir, restoreEngineState } from "./app-restore.js";
import { VERSION } from "./version.js";
import { type Daemon, maintenanceOf, readiness, type Restored, selfHealth } from "./app-daemon.js";

/** How often the watchdog alert looks at readiness. */
const WATCHDOG_CHECK_INTERVAL_MS = 1_000;

/** How often the alert checkpoint is written and the journal fsync'd. */
const CHECKPOINT_INTERVAL_MS = 5_000;
const JOURNAL_SYNC_INTERVAL_MS = 1_000;

/** State: the journal (seq continuity) and the alert checkpoint (no re-announce, no lost resolve). */
export function openState(app: Daemon, marketNowMs: () => number): Restored {
  const { config, deps, metrics } = app;
  const store = openStateDir(config.state.dir, () =>
    openStateStore({
      dir: config.state.dir,
      journalCapacity: config.server.journalSize,
      nowMs: deps.nowMs,
      logger: app.log("state"),
      ...(deps.process === undefined ? {} : { process: deps.process }),
    }),
  );
  app.store = store;
  const { recovered } = store;
  // in cluster mode a target's alert state is adopted from NATS when this member takes the target
  const engineState =
    config.cluster.nats.servers.length > 0 ? createMonitorState() : restoreEngineState(recovered);
  const { journal } = recovered;
  // silences are the operators' wall-clock time, like the sinks they quiet (not the simulated market's)
  const silencer = createSilencer({
    path: silenceFilePath(config.state.dir),
    nowMs: deps.nowMs,
    logger: app.log("silences"),
    maintenance: maintenanceOf(config),
    onClamped: (count) => metrics.silencesClamped.inc(count),
    ...(config.cluster.nats.servers.length === 0 ? {} : clusterSilencerOptions(() => app.cluster?.shared)),
  });
  app.silencer = silencer;
  const clusterJournal = createClusterJournal({
    ...deps,
    config: config.cluster,
    capacity: config.server.journalSize,
    fence: () => app.cluster?.member.leaseValid() ?? false,
    logger: app.log("cluster"),
    registry: metrics.registry,
  });
  app.clusterJournal = clusterJournal;
  const hub = createEventHub({
    journal: clusterJournal?.journal ?? journal,
    nowMs: marketNowMs,
    version: VERSION,
    ...(clusterJournal === undefined
      ? { persist: store.persistEvent.bind(store) }
      : {
          forward: (event) => {
            app.published.note(event);
            clusterJournal.forward(event);
          },
        }),
    externalLabels: () => app.config.alerts.externalLabels,
    onAlert: ({ rule, status, reason }) => metrics.alertTransitions.inc({ rule, status, reason }),
    silencing: (alert) => silencer.silencing(alert),
  });
  app.hub = hub;
  clusterJournal?.start(hub);
  metrics.bind({
    activeAlerts: () => hub.activeAlerts(),
    journalSize: () => (clusterJournal?.journal ?? journal).size,
    ready: () => readiness(app).ready,
    silenceStates: () => silencer.list().map((silence) => silence.status.state),
  });
  // sink_error alerts come from the sinks, not the engine: restore them from the journal so the
  // sink resolves its own on recovery; one whose sink is gone from the config resolves in startSinks
  const sinkErrors = firingSinkErrors(journal.entries());
  const staleStalls = firingAlertsOfRule(journal.entries(), "monitor_stalled");
  hub.restoreActive([...activeAlerts(engineState), ...sinkErrors]);
  return { hub, engineState, sinkErrors, staleStalls };
}

/** The watchdog alert, the periodic alert checkpoint and the journal fsync. */
export function startPeriodicTasks(app: Daemon, hub: EventHub): void {
  const watchdog = createWatchdogAlert({
    enabled: () => app.config.alerts.watchdog.enabled,
    readiness: () => selfHealth(app),
    publish: (alert) => hub.publishAlert(alert),
    nowMs: app.deps.nowMs,
  });
  app.timers.push(setInterval(() => watchdog.check(), WATCHDOG_CHECK_INTERVAL_MS).unref());
  app.timers.push(setInterval(() => periodicCheckpoint(app), CHECKPOINT_INTERVAL_MS).unref());
  app.timers.push(setInterval(() => app.store?.sync(), JOURNAL_SYNC_INTERVAL_MS).unref());
}

/** Write the alert checkpoint; throws so the stop path can report a failure. */
export function checkpoint(app: Daemon): void {
  const { store, runner, hub } = app;
  if (store === undefined || runner === undefined || hub === undefined) return;
  store.saveCheckpoint({ lastSeq: hub.lastSeq(), engine: exportAlertState(runner.state()) });
}

/** The periodic checkpoint: a failure is logged and retried on the next tick. */
function periodicCheckpoint(app: Daemon): void {
  try {
    checkpoint(app);
  } catch (error) {
    app.log("state").error({ err: error }, "could not write the alert checkpoint");
  }
}
