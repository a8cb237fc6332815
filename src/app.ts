// Composition root: builds the whole daemon (upstream, pipeline, sinks, servers, state) from injected dependencies.
import type { Server } from "node:http";
import { hostname } from "node:os";
import type { Logger } from "pino";
import { Registry } from "prom-client";
import type { Subscription } from "rxjs";
import type { Dispatcher } from "undici";
import { createClusterMode, type ClusterMode } from "./cluster/cluster-mode.js";
import { createClusterJournal, type ClusterJournal } from "./cluster/journal-stream.js";
import { clusterSilencerOptions } from "./cluster/cluster-shared.js";
import { withLocalAlerts } from "./cluster/cluster-error-alert.js";
import { configHash } from "./cluster/config-generation.js";
import { createPublishedAlerts, type PublishedAlerts } from "./cluster/published-alerts.js";
import { redactUrl } from "./config/redact.js";
import type { AppConfig } from "./config/types.js";
import { configWarnings } from "./config/warnings.js";
import { RULE_KINDS, type AlertPayload } from "./domain/events.js";
import { activeAlerts, createMonitorState, exportAlertState, type MonitorState } from "./domain/monitor.js";
import { alertLink, externalBaseUrl } from "./http/external-url.js";
import { createAccessPolicy } from "./http/access.js";
import { createHttpServer, listen } from "./http/server.js";
import { apiRoutes } from "./http/api/index.js";
import { operatorApiDeps } from "./app-api.js";
import { createApiRouter } from "./http/api/router.js";
import { loadStatusPage, statusPageDirs, type StatusPage } from "./http/status-page.js";
import { componentLogger } from "./logger.js";
import { createMetrics, type Metrics } from "./metrics.js";
import { createEventHub, type EventHub, type EventSource } from "./pipeline/event-hub.js";
import {
  createMonitorRunner,
  type MonitorRunner,
  type MonitorRunnerDeps,
} from "./pipeline/monitor-runner.js";
import {
  decideReadiness,
  decideSelfHealth,
  type Readiness,
  type ReadinessStatus,
} from "./domain/readiness.js";
import { createWatchdogAlert } from "./pipeline/watchdog-alert.js";
import { createLoopMonitor, type LoopMonitor } from "./pipeline/loop-monitor.js";
import { startSimulator, type RunningSimulator } from "./simulator/server.js";
import { createSystemClock, type SimClock } from "./simulator/clock.js";
import { resolveScenario } from "./simulator/scenario.js";
import {
  CHATOPS_DEFAULT_POLICY,
  createChatOpsSinks,
  type ChatOpsOptions,
  type ChatOpsSinks,
} from "./sinks/chatops/index.js";
import { clusterSinks, heartbeatSinks } from "./cluster/cluster-sinks.js";
import { startLogSink } from "./sinks/log-sink.js";
import { createWsServer, type WsServer } from "./sinks/ws/server.js";
import { createSilencer, type Silencer } from "./pipeline/silencer.js";
import { createMaintenanceCalendar } from "./domain/maintenance.js";
import type { Silence } from "./domain/silence.js";
import { silenceFilePath } from "./state/silence-file.js";
import type { ProcessIdentity } from "./state/lock-file.js";
import { firingAlertsOfRule, firingSinkErrors } from "./state/sink-errors.js";
import { openStateStore, type StateStore } from "./state/state-store.js";
import {
  openStateDir,
  resolveOrphanSinkErrors,
  restoreEngineState,
  stallEndedByRestart,
} from "./app-restore.js";
import { createDispatcher, createPragmaClient } from "./upstream/client.js";
import { reloadUpstream, streamSettingsOf, type StreamClientDeps } from "./upstream-reload.js";
import { openDaemonRecording, type DaemonRecording } from "./record/daemon-recording.js";
import type { Recorder } from "./record/recorder.js";
import type { SkippedItem } from "./upstream/decode.js";
import { createSkippedItemLog } from "./upstream/skip-log.js";
import { adaptationNotes } from "./config/notes.js";
import type { PragmaClient } from "./upstream/types.js";
import { upstreamRequestObserver } from "./upstream-observer.js";
import { VERSION } from "./version.js";

/** Everything the daemon takes from the outside world. */
export interface AppDeps {
  readonly config: AppConfig;
  readonly logger: Logger;
  readonly nowMs: () => number;
  readonly random: () => number;
  /** Called each second the event loop runs on time (main.ts pings systemd's watchdog). */
  readonly onLoopHealthy?: () => void;
  /** This process, to lock `state.dir` against a second daemon (omitted in in-process tests). */
  readonly process?: ProcessIdentity;
}

/** A running (or runnable) daemon. */
export interface App {
  /** Start everything; resolves once the HTTP/WebSocket port listens. */
  start(): Promise<{ readonly port: number }>;
  /**
   * Graceful stop: `stopping` event, pollers off, sinks drained up to the deadline, clients closed with 1001.
   * Every step runs even when one fails; the report names the failed ones (main.ts turns them into the exit code).
   */
  stop(deadlineMs: number): Promise<StopReport>;
  /** Apply a new, already validated config: only changed targets, rules and sinks are rebuilt. */
  reload(config: AppConfig): Promise<void>;
  /** What /readyz answers: ready when listening, every target's latest poll succeeded and no sink fails. */
  readiness(): Readiness;
  readonly events: EventSource;
  readonly metrics: Metrics;
  /** Base URL of the upstream actually polled (the embedded simulator's when url = "simulator"). */
  upstreamUrl(): string;
}

/** What a stop achieved: the steps that failed (each logged with its error), empty when all went well. */
export interface StopReport {
  readonly failedSteps: readonly string[];
}

/** How often the event loop is sampled for stalls (and systemd's watchdog pinged). */
const LOOP_SAMPLE_INTERVAL_MS = 1_000;
/** How often the watchdog alert looks at readiness. */
const WATCHDOG_CHECK_INTERVAL_MS = 1_000;

/** How often time-driven alert work runs (pending → firing, reminders, staleness); a recording notes it for replay. */
const TICK_MS = 1_000;

/** How often the alert checkpoint is written and the journal fsync'd. */
const CHECKPOINT_INTERVAL_MS = 5_000;
const JOURNAL_SYNC_INTERVAL_MS = 1_000;
/** How long a cluster member adopting keys waits to have read the event log to its end before the next pass tries. */
const READ_THROUGH_WAIT_MS = 1_000;

/** The daemon's parts, filled in by the start steps in order; `config` and `knownRules` change on reload. */
interface Daemon {
  readonly deps: AppDeps;
  readonly metrics: Metrics;
  readonly log: (component: string) => Logger;
  // `server` changes only on restart (see reload): links keep the URL the daemon started with.
  readonly serverAtStart: AppConfig["server"];
  readonly timers: NodeJS.Timeout[];
  config: AppConfig;
  knownRules: ReadonlySet<string>;
  store: StateStore | undefined;
  silencer: Silencer | undefined;
  hub: EventHub | undefined;
  simulator: RunningSimulator | undefined;
  dispatcher: Dispatcher | undefined;
  runner: MonitorRunner | undefined;
  /** Cluster membership (undefined in the default single-process mode). */
  cluster: ClusterMode | undefined;
  /** Cluster mode's event log on JetStream: the hub journals through it instead of `state.dir`. */
  clusterJournal: ClusterJournal | undefined;
  /** Cluster mode: the daemon alerts this process sent to the cluster's log (it re-announces only those). */
  readonly published: PublishedAlerts;
  loopMonitor: LoopMonitor | undefined;
  httpServer: Server | undefined;
  ws: WsServer | undefined;
  chatops: ChatOpsSinks | undefined;
  recording: DaemonRecording | undefined;
  logSink: Subscription | undefined;
  upstreamUrl: string;
  listeningPort: number;
  /** `started` was announced (a stop then announces `stopping`). */
  started: boolean;
  /** When start() began (the daemon's clock); NaN before. */
  startedAtMs: number;
  /** 0 for the config the daemon started with, +1 on each successful reload (the API's status). */
  configGeneration: number;
}

/** What the state directory gave back: the hub over the journal, the engine state, and alerts to settle. */
interface Restored {
  readonly hub: EventHub;
  readonly engineState: MonitorState;
  /** `sink_error` alerts firing in the journal: the sinks resolve their own, the gone ones are resolved here. */
  readonly sinkErrors: readonly AlertPayload[];
  /** A `monitor_stalled` left firing by the previous run (killed while stalled): over, resolved once sinks run. */
  readonly staleStalls: readonly AlertPayload[];
}

/** The clock of the market: the embedded simulator's when it runs faster than real time, else the daemon's. */
interface MarketClock {
  readonly simClock: SimClock;
  readonly nowMs: () => number;
}

/** Build the daemon; nothing runs until `start()`. */
export function createApp(deps: AppDeps): App {
  const app: Daemon = {
    deps,
    metrics: createMetrics(new Registry()),
    log: (component) => componentLogger(deps.logger, component),
    serverAtStart: deps.config.server,
    timers: [],
    config: deps.config,
    knownRules: ruleNames(deps.config),
    store: undefined,
    silencer: undefined,
    hub: undefined,
    simulator: undefined,
    dispatcher: undefined,
    runner: undefined,
    cluster: undefined,
    clusterJournal: undefined,
    published: createPublishedAlerts(),
    loopMonitor: undefined,
    httpServer: undefined,
    ws: undefined,
    chatops: undefined,
    recording: undefined,
    logSink: undefined,
    upstreamUrl: "",
    listeningPort: deps.config.server.port,
    started: false,
    startedAtMs: Number.NaN,
    configGeneration: 0,
  };
  const events: EventSource = {
    get events$() {
      return requireHub(app).events$;
    },
    lastSeq: () => requireHub(app).lastSeq(),
    oldestSeq: () => requireHub(app).oldestSeq(),
    replay: (since) => requireHub(app).replay(since),
    activeAlerts: () => requireHub(app).activeAlerts(),
    latestPrices: () => requireHub(app).latestPrices(),
    wantPrices: () => requireHub(app).wantPrices(),
    wasNotified: (fingerprint) => requireHub(app).wasNotified(fingerprint),
  };
  return {
    events,
    metrics: app.metrics,
    upstreamUrl: () => app.upstreamUrl,
    readiness: () => readiness(app),
    start: () => startApp(app),
    stop: (deadlineMs) => stopApp(app, deadlineMs),
    reload: (next) => reloadApp(app, next),
  };
}

/** The config's maintenance windows as silences at a given time (compiled once per config). */
function maintenanceOf(config: AppConfig): (nowMs: number) => readonly Silence[] {
  const calendar = createMaintenanceCalendar(config.maintenance);
  return (nowMs) => calendar.silencesAt(nowMs);
}

function requireSilencer(app: Daemon): Silencer {
  if (app.silencer === undefined) throw new Error("app not started");
  return app.silencer;
}

function requireHub(app: Daemon): EventHub {
  if (app.hub === undefined) throw new Error("app not started");
  return app.hub;
}

function readinessStatus(app: Daemon): ReadinessStatus {
  return {
    listening: app.httpServer?.listening === true,
    pipelineStarted: app.runner !== undefined,
    targets: app.runner?.targetHealth() ?? [],
    // a heartbeat is a dead-man's switch, not a delivery channel: its failures fire its sink_error
    sinks: (app.chatops?.status() ?? [])
      .filter((sink) => sink.kind !== "heartbeat")
      .map((sink) => ({ ...sink, alertFiring: sink.failing })),
  };
}

/** What /readyz answers: everything works, upstream and sinks included. */
function readiness(app: Daemon): Readiness {
  const base = decideReadiness(readinessStatus(app));
  return app.cluster?.readiness(base) ?? base;
}

/** What the heartbeat and watchdog report: the daemon itself works (a failing upstream is an alert, not its death). */
function selfHealth(app: Daemon): Readiness {
  return decideSelfHealth(readinessStatus(app));
}

/** Start everything in dependency order; resolves once the port listens and the pipeline runs. */
async function startApp(app: Daemon): Promise<{ readonly port: number }> {
  const { config, deps } = app;
  app.startedAtMs = deps.nowMs();
  const clock = marketClock(app);
  const restored = openState(app, clock.nowMs);
  // the port, before anything polls or sends: a second daemon on a busy port stops here, in one line
  const port = await openPort(app, restored.hub, clock.nowMs);
  app.recording = openDaemonRecording(config.recording, {
    nowMs: clock.nowMs,
    logger: app.log("recording"),
    metrics: app.metrics,
  });
  const { client, dispatcher } = await connectUpstream(app, clock.simClock);
  await startSinks(app, restored, dispatcher);
  // muting re-checked now (silences that ended while the daemon was down re-announce what they held back)
  requireSilencer(app).start(restored.hub);
  startPipeline(
    app,
    restored,
    client,
    clock.nowMs,
    streamSettingsOf(config.upstream, streamClientDeps(app, dispatcher)),
  );
  startPeriodicTasks(app, restored.hub);
  restored.hub.publishLifecycle("started", {
    port,
    upstream: app.simulator === undefined ? "remote" : "simulator",
  });
  app.started = true;
  deps.logger.info(
    { port, host: config.server.host, upstream: redactUrl(app.upstreamUrl) },
    "pragma-monitor started",
  );
  for (const warning of configWarnings(config))
    deps.logger.warn({ key: warning.key }, `insecure configuration: ${warning.reason}`);
  return { port };
}

/**
 * Market time: an embedded simulator running faster than real time carries the daemon's sense of "now"
 * with it, or every price would look like it came from the future and staleness rules would never fire.
 * Sinks, the WebSocket server and deadlines stay on real time.
 */
function marketClock(app: Daemon): MarketClock {
  const { upstream } = app.config;
  const { nowMs } = app.deps;
  const speed = upstream.simulator.speed;
  if (upstream.url !== "simulator" || speed === 1) return { simClock: { nowMs }, nowMs };
  app.log("upstream").warn({ speed }, "simulated market runs faster than real time: alert times follow it");
  const simClock = createSystemClock(speed, nowMs());
  return { simClock, nowMs: () => simClock.nowMs() };
}

/** State: the journal (seq continuity) and the alert checkpoint (no re-announce, no lost resolve). */
function openState(app: Daemon, marketNowMs: () => number): Restored {
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

/** The HTTP port with the WebSocket and operator APIs on it, under one Host/Origin policy; returns the port listened on. */
async function openPort(app: Daemon, hub: EventHub, marketNowMs: () => number): Promise<number> {
  const { config, metrics, deps } = app;
  const access = createAccessPolicy(config.server);
  const httpServer = createHttpServer({
    metrics,
    readiness: () => readiness(app),
    logger: app.log("http"),
    access,
    metricsToken: config.server.metricsToken,
    maxConnections: config.server.maxConnections,
    nowMs: deps.nowMs,
    api: createApiRouter({
      routes: apiRoutes(
        operatorApiDeps({
          hub,
          runner: () => app.runner,
          chatops: () => app.chatops,
          readiness: () => readiness(app),
          config: () => app.config,
          upstreamUrl: () => app.upstreamUrl,
          nowMs: deps.nowMs,
          marketNowMs,
          startedAtMs: () => app.startedAtMs,
          configGeneration: () => app.cluster?.shared.configGeneration() ?? app.configGeneration,
          cluster: () => app.cluster?.shared.status() ?? null,
          silencer: requireSilencer(app),
        }),
      ),
      access,
      token: () => app.config.server.token,
    }),
    statusPage: openStatusPage(app),
  });
  app.httpServer = httpServer;
  app.ws = createWsServer({
    access,
    server: httpServer,
    path: "/ws",
    source: hub,
    config: config.server,
    metrics,
    logger: app.log("ws"),
    knownPairs: () => knownPairs(app.config),
    knownRules: () => app.knownRules,
    version: VERSION,
    nowMs: deps.nowMs,
  });
  const { port } = await listen(httpServer, config.server.host, config.server.port);
  app.listeningPort = port;
  return port;
}

/** What the stream client needs besides `upstream`: the upstream actually used, the shared pool, skipped items counted. */
function streamClientDeps(app: Daemon, dispatcher: Dispatcher): StreamClientDeps {
  const { metrics, deps } = app;
  const onSkippedItem = createSkippedItemHandler(metrics, app.log("upstream"), deps.nowMs);
  const recorder = app.recording?.recorder;
  return {
    baseUrl: app.upstreamUrl,
    dispatcher,
    random: deps.random,
    onSkippedItem,
    ...(recorder === undefined ? {} : { onMessage: (message) => recorder.sse(message) }),
  };
}

/** The status page's files, read once; a checkout that was never built serves a 503 at `/` and says why once. */
function openStatusPage(app: Daemon): StatusPage {
  const page = loadStatusPage(statusPageDirs());
  if (page.unavailable !== null)
    app.log("http").warn({ reason: page.unavailable }, "status page not built: / answers 503");
  return page;
}

/** The embedded simulator of `upstream.url = "simulator"`, on a free 127.0.0.1 port. */
function startEmbeddedSimulator(
  sim: AppConfig["upstream"]["simulator"],
  clock: SimClock,
): Promise<RunningSimulator> {
  return startSimulator({
    host: "127.0.0.1",
    port: 0,
    seed: sim.seed,
    clock,
    apiKeys: sim.apiKeys,
    ...(sim.scenario === "" ? {} : { scenario: resolveScenario(sim.scenario) }),
  });
}

/**
 * A Pragma client on the configured upstream, started as the daemon starts it (the embedded simulator on the
 * real clock when url is "simulator"), without the daemon: `backtest --from --to` reads candles through it.
 */
export async function openUpstreamClient(
  config: AppConfig,
): Promise<{ readonly client: PragmaClient; close(): Promise<void> }> {
  const { upstream } = config;
  const simulator =
    upstream.url === "simulator"
      ? await startEmbeddedSimulator(upstream.simulator, createSystemClock(1))
      : undefined;
  const baseUrl = simulator?.url ?? upstream.url;
  const dispatcher = createDispatcher({ connections: upstream.connections });
  const client = createPragmaClient({
    baseUrl,
    vaultBaseUrl: simulator?.vaultUrl ?? (upstream.vaultUrl === "" ? baseUrl : upstream.vaultUrl),
    ...(upstream.apiKey === "" ? {} : { apiKey: upstream.apiKey }),
    dispatcher,
    timeoutMs: upstream.timeoutMs,
    retry: upstream.retry,
  });
  return {
    client,
    async close() {
      await dispatcher.close();
      await simulator?.close();
    },
  };
}

/** Upstream: the embedded simulator or a real base URL, one keep-alive pool for everything. */
async function connectUpstream(
  app: Daemon,
  simClock: SimClock,
): Promise<{ readonly client: PragmaClient; readonly dispatcher: Dispatcher }> {
  const { config, metrics, deps } = app;
  const sim = config.upstream.simulator;
  let baseUrl = config.upstream.url;
  let vaultBaseUrl = config.upstream.vaultUrl;
  if (baseUrl === "simulator") {
    const simulator = await startEmbeddedSimulator(sim, simClock);
    app.simulator = simulator;
    baseUrl = simulator.url;
    vaultBaseUrl = simulator.vaultUrl;
    app.log("upstream").info({ url: redactUrl(baseUrl) }, "embedded simulator started");
  }
  app.upstreamUrl = baseUrl;
  const dispatcher = createDispatcher({ connections: config.upstream.connections });
  app.dispatcher = dispatcher;
  const client = createUpstreamClient(config.upstream, {
    baseUrl,
    vaultBaseUrl: vaultBaseUrl === "" ? baseUrl : vaultBaseUrl,
    dispatcher,
    metrics,
    random: deps.random,
    onSkippedItem: createSkippedItemHandler(metrics, app.log("upstream"), deps.nowMs),
    ...(app.recording === undefined ? {} : { recorder: app.recording.recorder }),
  });
  return { client, dispatcher };
}

/** Sinks: stdout and chat-ops; then settle the sink errors and the stall the previous run left firing. */
async function startSinks(app: Daemon, restored: Restored, dispatcher: Dispatcher): Promise<void> {
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
function startPipeline(
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
}

/** The watchdog alert, the periodic alert checkpoint and the journal fsync. */
function startPeriodicTasks(app: Daemon, hub: EventHub): void {
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
function checkpoint(app: Daemon): void {
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

/** Graceful stop, every step in its own try/catch; the report names the steps that failed. */
async function stopApp(app: Daemon, deadlineMs: number): Promise<StopReport> {
  const { logger, nowMs } = app.deps;
  const deadline = nowMs() + deadlineMs;
  const remaining = (): number => Math.max(0, deadline - nowMs());
  const failedSteps: string[] = [];
  const step = async (name: string, action: () => unknown): Promise<void> => {
    try {
      await action();
    } catch (error) {
      failedSteps.push(name);
      logger.error({ step: name, err: error }, `error while stopping: ${name}`);
    }
  };
  // after a failed start nothing ran: no `stopping` event for a daemon that never announced `started`
  if (app.started) await step("hub", () => app.hub?.publishLifecycle("stopping"));
  app.started = false;
  for (const timer of app.timers.splice(0)) clearInterval(timer);
  app.loopMonitor?.stop();
  app.silencer?.stop();
  await step("pipeline", () => app.runner?.stop());
  await step("journal", () => app.clusterJournal?.stop(Math.min(remaining(), 2_000)));
  await step("cluster", () => app.cluster?.stop());
  await step("recording", () => app.recording?.writer.close());
  await step("chatops", () => app.chatops?.stop(remaining()));
  await step("ws", () => app.ws?.close(Math.min(remaining(), 2_000)));
  await step("http", () => closeServer(app.httpServer));
  await step("checkpoint", () => checkpoint(app));
  await step("state", () => app.store?.close()); // fsyncs the journal and releases the lock even if the checkpoint failed
  await step("simulator", () => app.simulator?.close());
  await step("upstream", () => app.dispatcher?.close());
  app.logSink?.unsubscribe();
  app.hub?.complete();
  return { failedSteps };
}

/** Apply a new, already validated config: targets, rules, transports and sinks when they changed; the rest on restart. */
async function reloadApp(app: Daemon, next: AppConfig): Promise<void> {
  const previous = app.config;
  app.config = next;
  app.knownRules = ruleNames(next);
  const { dispatcher } = app;
  const upstreamOnRestart =
    dispatcher === undefined
      ? []
      : reloadUpstream(app.runner, previous.upstream, next.upstream, {
          ...streamClientDeps(app, dispatcher),
          logger: app.log("upstream"),
        });
  app.runner?.update(next.monitors, next.rules);
  app.cluster?.member.refresh();
  app.cluster?.shared.configLoaded();
  if (JSON.stringify(previous.maintenance) !== JSON.stringify(next.maintenance))
    app.silencer?.setMaintenance(maintenanceOf(next));
  if (JSON.stringify(previous.sinks) !== JSON.stringify(next.sinks)) {
    await app.chatops?.reconfigure(next.sinks, Math.min(next.shutdown.drainTimeoutMs, 5_000));
    const hub = requireHub(app);
    const firingSinkErrors = hub.activeAlerts().filter((alert) => alert.rule === "sink_error");
    resolveOrphanSinkErrors(hub, firingSinkErrors, next.sinks, app.deps.nowMs());
  }
  const restartOnly = [
    ...(["server", "state", "recording", "cluster"] as const).filter(
      (key) => JSON.stringify(previous[key]) !== JSON.stringify(next[key]),
    ),
    ...upstreamOnRestart,
  ];
  if (restartOnly.length > 0)
    app.deps.logger.warn({ sections: restartOnly }, "these sections change only on restart");
  app.configGeneration += 1;
  requireHub(app).publishLifecycle("config_reloaded", {
    targets: app.runner?.targetIds().length ?? 0,
    rules: next.rules.length,
  });
}

/** The Pragma client on the shared keep-alive pool, feeding the upstream latency and request metrics. */
function createUpstreamClient(
  upstream: AppConfig["upstream"],
  options: {
    readonly baseUrl: string;
    readonly vaultBaseUrl: string;
    readonly dispatcher: Dispatcher;
    readonly metrics: Metrics;
    readonly random: () => number;
    readonly onSkippedItem: (item: SkippedItem) => void;
    readonly recorder?: Recorder;
  },
): PragmaClient {
  const { metrics, recorder } = options;
  return createPragmaClient({
    baseUrl: options.baseUrl,
    vaultBaseUrl: options.vaultBaseUrl,
    ...(upstream.apiKey === "" ? {} : { apiKey: upstream.apiKey }),
    dispatcher: options.dispatcher,
    timeoutMs: upstream.timeoutMs,
    retry: upstream.retry,
    random: options.random,
    observer: upstreamRequestObserver(metrics),
    onSkippedItem: options.onSkippedItem,
    ...(recorder === undefined ? {} : { onResponse: (sample) => recorder.response(sample) }),
  });
}

/** Count every list item the decoders skipped as malformed and log it once per burst. */
function createSkippedItemHandler(
  metrics: Metrics,
  logger: Logger,
  nowMs: () => number,
): (item: SkippedItem) => void {
  const logSkippedItem = createSkippedItemLog({ logger, nowMs });
  return (item) => {
    metrics.upstreamSkippedItems.inc({ endpoint: item.endpoint });
    logSkippedItem(item);
  };
}

/** Rule names a WebSocket `rules` filter may use: every rule kind and every configured rule id (as sink filters). */
function ruleNames(config: AppConfig): ReadonlySet<string> {
  return new Set([...RULE_KINDS, ...config.rules.map((rule) => rule.id)]);
}

/** Every pair the config monitors (for WebSocket filter validation). */
function knownPairs(config: AppConfig): ReadonlySet<string> {
  const m = config.monitors;
  return new Set([
    ...m.offchain.map((o) => o.pair),
    ...m.onchain.map((o) => o.pair),
    ...m.funding.map((f) => f.pair),
  ]);
}

/** Close an HTTP server, resolving when it has stopped (idle keep-alive sockets closed). */
function closeServer(server: Server | undefined): Promise<void> {
  if (server === undefined || !server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
