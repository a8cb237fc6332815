// The sinks and the pipeline of a starting daemon, cluster mode included.
import { hostname } from "node:os";
import type { Dispatcher } from "undici";
import { createClusterMode } from "./cluster/cluster-mode.js";
import { withLocalAlerts } from "./cluster/cluster-error-alert.js";
import { configHash } from "./cluster/config-generation.js";
import { alertLink, externalBaseUrl } from "./http/external-url.js";
import { createMonitorRunner, type MonitorRunnerDeps } from "./pipeline/monitor-runner.js";
import { createLoopMonitor } from "./pipeline/loop-monitor.js";
import { CHATOPS_DEFAULT_POLICY, type ChatOpsOptions, createChatOpsSinks } from "./sinks/chatops/index.js";
import { clusterSinks, heartbeatSinks } from "./cluster/cluster-sinks.js";
import { startLogSink } from "./sinks/log-sink.js";
import { resolveOrphanSinkErrors, stallEndedByRestart } from "./app-restore.js";
import { adaptationNotes } from "./config/notes.js";
import type { AppConfig } from "./config/types.js";
import { warmupNotes } from "./pipeline/warmup.js";
import type { PragmaClient } from "./upstream/types.js";
import { type Daemon, requireSilencer, type Restored, selfHealth } from "./app-daemon.js";

/** How often the event loop is sampled for stalls (and systemd's watchdog pinged). */
const LOOP_SAMPLE_INTERVAL_MS = 1_000;

/** How often time-driven alert work runs (pending → firing, reminders, staleness); a recording notes it for replay. */
const TICK_MS = 1_000;

/** How long a cluster member adopting keys waits to have read the event log to its end before the next pass tries. */
const READ_THROUGH_WAIT_MS = 1_000;

/** Sinks: stdout and chat-ops; then settle the sink errors and the stall the previous run left firing. */
export async function startSinks(app: Daemon, restored: Restored, dispatcher: Dispatcher): Promise<void> {
  const { config, deps, metrics } = app;
  const { hub } = restored;
  // cluster mode: a member's sinks notify the events it published, as before the shared log
  const source = app.clusterJournal?.own(hub) ?? hub;
  // cluster_error is raised on this member's bus only (NATS is what it cannot reach): its log sink shows it
  app.logSink = startLogSink(withLocalAlerts(source, hub), app.log("alerts"));
  const cluster = app.clusterJournal !== undefined;
  const chatopsOptions: ChatOpsOptions = {
    sinks: cluster ? heartbeatSinks(config.sinks) : config.sinks,
    source,
    stateDir: config.state.dir,
    dispatcher,
    metrics,
    logger: app.log("chatops"),
    raise: (alert) => hub.publishAlert(alert),
    nowMs: deps.nowMs,
    random: deps.random,
    generatorUrl: (fingerprint) =>
      alertLink(externalBaseUrl(app.serverAtStart, app.listeningPort, hostname()), fingerprint),
    isHealthy: () => selfHealth(app).ready,
  };
  const own = createChatOpsSinks(chatopsOptions);
  // cluster mode: one notification per event per sink across the members, through the shared consumers
  const chatops = cluster
    ? clusterSinks(own, config.sinks, {
        ...chatopsOptions,
        config: config.cluster,
        activeAlerts: () => hub.activeAlerts(),
        localEvents$: hub.events$,
        timers: { setTimer: setTimeout, clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout) },
        policy: CHATOPS_DEFAULT_POLICY,
      })
    : own;
  app.chatops = chatops;
  await chatops.start();
  resolveOrphanSinkErrors(hub, restored.sinkErrors, config.sinks, deps.nowMs());
  for (const stall of restored.staleStalls) hub.publishAlert(stallEndedByRestart(stall, deps.nowMs()));
}

/** The pipeline, guarded against blaming the upstream for the daemon's own stalls. */
export function startPipeline(
  app: Daemon,
  restored: Restored,
  client: PragmaClient,
  marketNowMs: () => number,
  stream: MonitorRunnerDeps["stream"],
): void {
  const { config, deps, metrics } = app;
  const { hub } = restored;
  const pollTimeoutMs = config.upstream.retry.maxElapsedMs + config.upstream.timeoutMs;
  app.loopMonitor = createLoopMonitor({
    logger: app.log("loop"),
    nowMs: deps.nowMs,
    settings: {
      sampleIntervalMs: LOOP_SAMPLE_INTERVAL_MS,
      thresholdMs: config.alerts.monitorStalled.thresholdMs,
      // every poll in flight during the stall has ended (or timed out) by then
      holdMs: pollTimeoutMs + LOOP_SAMPLE_INTERVAL_MS,
    },
    publish: (alert) => hub.publishAlert(alert),
    metrics,
    ...(deps.onLoopHealthy === undefined ? {} : { onHealthy: deps.onLoopHealthy }),
  });
  const recorder = app.recording?.recorder;
  recorder?.started(TICK_MS, app.upstreamUrl);
  const cluster = createClusterMode({
    ...deps,
    lastSeq: () => hub.lastSeq(),
    journaledAfter: (seq) =>
      hub.replay(seq).events.flatMap((event) => (event.type === "alert" ? [event.alert] : [])),
    unpublished: () => app.clusterJournal?.unpublished() ?? false,
    readThrough: () => app.clusterJournal?.readThrough(READ_THROUGH_WAIT_MS) ?? Promise.resolve(true),
    logger: app.log("cluster"),
    config: config.cluster,
    monitors: () => app.config.monitors,
    rules: () => app.config.rules,
    registry: metrics.registry,
    configHash: () => configHash(app.config),
    published: app.published,
  });
  app.cluster = cluster;
  const runner = createMonitorRunner(
    {
      client: cluster?.fenceClient(client) ?? client,
      hub: cluster?.fenceHub(hub) ?? hub,
      metrics,
      logger: app.log("pipeline"),
      nowMs: marketNowMs,
      wallNowMs: deps.nowMs,
      random: deps.random,
      pollTimeoutMs,
      holdingVerdicts: () => app.loopMonitor?.holding() ?? false,
      tickMs: TICK_MS,
      ...(stream === undefined ? {} : { stream }),
      ...(recorder === undefined ? {} : { recorder }),
    },
    restored.engineState,
  );
  app.runner = runner;
  cluster?.attach(runner);
  cluster?.shared.start(requireSilencer(app), hub);
  runner.update(config.monitors, config.rules);
  for (const note of adaptationNotes(config.monitors, config.upstream.transport))
    app.log("monitors").info({ note }, "request adapted to upstream rules");
  logWarmupNotes(app, config);
}

/**
 * Which targets the config's warm-up leaves unwarmed, and why: one line a reason at start; on a reload (`previous` the
 * config it replaces) only the lines that changed, so a reload that starts or re-decides nothing repeats nothing.
 */
export function logWarmupNotes(app: Daemon, config: AppConfig, previous?: AppConfig): void {
  const said = new Set(previous === undefined ? [] : warmupNotes(previous.monitors, previous.rules));
  for (const note of warmupNotes(config.monitors, config.rules))
    if (!said.has(note)) app.log("monitors").info({ note }, "target history not warmed from candles");
}
