// Composition root: builds the whole daemon (upstream, pipeline, sinks, servers, state) from injected dependencies.
import type { Server } from "node:http";
import { hostname } from "node:os";
import type { Logger } from "pino";
import { Registry } from "prom-client";
import type { Subscription } from "rxjs";
import type { Dispatcher } from "undici";
import { redactUrl } from "./config/redact.js";
import type { AppConfig } from "./config/types.js";
import { configWarnings } from "./config/warnings.js";
import { RULE_KINDS, type AlertPayload } from "./domain/events.js";
import {
  activeAlerts,
  createMonitorState,
  exportAlertState,
  importAlertState,
  restoreAnnounced,
  type MonitorState,
} from "./domain/monitor.js";
import { alertLink, externalBaseUrl } from "./http/external-url.js";
import { createAccessPolicy } from "./http/access.js";
import { createHttpServer, listen } from "./http/server.js";
import { isPmError, PmError } from "./domain/errors.js";
import { componentLogger } from "./logger.js";
import { createMetrics, type Metrics } from "./metrics.js";
import { createEventHub, type EventHub, type EventSource } from "./pipeline/event-hub.js";
import { createMonitorRunner, type MonitorRunner } from "./pipeline/monitor-runner.js";
import {
  decideReadiness,
  decideSelfHealth,
  type Readiness,
  type ReadinessStatus,
} from "./domain/readiness.js";
import { createWatchdogAlert } from "./pipeline/watchdog-alert.js";
import { createLoopMonitor, type LoopMonitor } from "./pipeline/loop-monitor.js";
import { startSimulator, type RunningSimulator } from "./simulator/server.js";
import { createSystemClock } from "./simulator/clock.js";
import { resolveScenario } from "./simulator/scenario.js";
import { createChatOpsSinks, type ChatOpsSinks } from "./sinks/chatops/index.js";
import { startLogSink } from "./sinks/log-sink.js";
import { createWsServer, type WsServer } from "./sinks/ws/server.js";
import type { ProcessIdentity } from "./state/lock-file.js";
import { firingAlertsOfRule, firingSinkErrors } from "./state/sink-errors.js";
import { openStateStore, type RecoveredState, type StateStore } from "./state/state-store.js";
import { createDispatcher, createPragmaClient } from "./upstream/client.js";
import type { SkippedItem } from "./upstream/decode.js";
import { createSkippedItemLog } from "./upstream/skip-log.js";
import { adaptationNotes } from "./config/notes.js";
import type { PragmaClient } from "./upstream/types.js";
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

/** How often the alert checkpoint is written and the journal fsync'd. */
const CHECKPOINT_INTERVAL_MS = 5_000;
const JOURNAL_SYNC_INTERVAL_MS = 1_000;

/** Build the daemon; nothing runs until `start()`. */
export function createApp(deps: AppDeps): App {
  const { logger, nowMs, random } = deps;
  let config = deps.config;
  let knownRules = ruleNames(config);
  const metrics = createMetrics(new Registry());
  const log = (component: string): Logger => componentLogger(logger, component);

  let store: StateStore | undefined;
  let hub: EventHub | undefined;
  let simulator: RunningSimulator | undefined;
  let dispatcher: Dispatcher | undefined;
  let runner: MonitorRunner | undefined;
  let loopMonitor: LoopMonitor | undefined;
  let httpServer: Server | undefined;
  let ws: WsServer | undefined;
  let chatops: ChatOpsSinks | undefined;
  let logSink: Subscription | undefined;
  let upstreamUrl = "";
  let listeningPort = config.server.port;
  // `server` changes only on restart (see reload): links keep the URL the daemon started with.
  const serverAtStart = config.server;
  const timers: NodeJS.Timeout[] = [];
  const generatorUrl = (fingerprint: string): string =>
    alertLink(externalBaseUrl(serverAtStart, listeningPort, hostname()), fingerprint);

  const requireHub = (): EventHub => {
    if (hub === undefined) throw new Error("app not started");
    return hub;
  };

  let started = false;

  /** Write the alert checkpoint; throws so the stop path can report a failure. */
  const checkpoint = (): void => {
    if (store === undefined || runner === undefined || hub === undefined) return;
    store.saveCheckpoint({ lastSeq: hub.lastSeq(), engine: exportAlertState(runner.state()) });
  };
  /** The periodic checkpoint: a failure is logged and retried on the next tick. */
  const periodicCheckpoint = (): void => {
    try {
      checkpoint();
    } catch (error) {
      log("state").error({ err: error }, "could not write the alert checkpoint");
    }
  };

  const events: EventSource = {
    get events$() {
      return requireHub().events$;
    },
    lastSeq: () => requireHub().lastSeq(),
    oldestSeq: () => requireHub().oldestSeq(),
    replay: (since) => requireHub().replay(since),
    activeAlerts: () => requireHub().activeAlerts(),
    latestPrices: () => requireHub().latestPrices(),
  };

  const readinessStatus = (): ReadinessStatus => ({
    listening: httpServer?.listening === true,
    pipelineStarted: runner !== undefined,
    targets: runner?.targetHealth() ?? [],
    // a heartbeat is a dead-man's switch, not a delivery channel: its failures fire its sink_error
    sinks: (chatops?.status() ?? [])
      .filter((sink) => sink.kind !== "heartbeat")
      .map((sink) => ({ ...sink, alertFiring: sink.failing })),
  });
  /** What /readyz answers: everything works, upstream and sinks included. */
  const readiness = (): Readiness => decideReadiness(readinessStatus());
  /** What the heartbeat and watchdog report: the daemon itself works (a failing upstream is an alert, not its death). */
  const selfHealth = (): Readiness => decideSelfHealth(readinessStatus());

  return {
    events,
    metrics,
    upstreamUrl: () => upstreamUrl,
    readiness,

    async start() {
      // 0. market time: an embedded simulator running faster than real time carries the daemon's
      // sense of "now" with it, or every price would look like it came from the future and staleness
      // rules would never fire. Sinks, the WebSocket server and deadlines stay on real time.
      const sim = config.upstream.simulator;
      const embedded = config.upstream.url === "simulator";
      const simClock = embedded && sim.speed !== 1 ? createSystemClock(sim.speed, nowMs()) : { nowMs };
      const marketNowMs = (): number => simClock.nowMs();
      if (embedded && sim.speed !== 1) {
        log("upstream").warn(
          { speed: sim.speed },
          "simulated market runs faster than real time: alert times follow it",
        );
      }

      // 1. state: journal (seq continuity) and the alert checkpoint (no re-announce, no lost resolve)
      store = openStateDir(config.state.dir, () =>
        openStateStore({
          dir: config.state.dir,
          journalCapacity: config.server.journalSize,
          nowMs,
          logger: log("state"),
          ...(deps.process === undefined ? {} : { process: deps.process }),
        }),
      );
      const { recovered } = store;
      const engineState = restoreEngineState(recovered);
      const persist = store.persistEvent.bind(store);
      const { journal } = recovered;
      hub = createEventHub({
        journal,
        nowMs: marketNowMs,
        version: VERSION,
        persist,
        externalLabels: () => config.alerts.externalLabels,
        onAlert: ({ rule, status, reason }) => metrics.alertTransitions.inc({ rule, status, reason }),
      });
      const bus = hub;
      metrics.bind({
        activeAlerts: () => bus.activeAlerts(),
        journalSize: () => journal.size,
        ready: () => readiness().ready,
      });
      // sink_error alerts come from the sinks, not the engine: restore them from the journal so the
      // sink resolves its own on recovery; one whose sink is gone from the config resolves below
      const sinkErrors = firingSinkErrors(recovered.journal.entries());
      // a monitor_stalled left firing by the previous run (killed while stalled) is over: resolved once sinks run
      const staleStalls = firingAlertsOfRule(recovered.journal.entries(), "monitor_stalled");
      hub.restoreActive([...activeAlerts(engineState), ...sinkErrors]);

      // 2. the port, before anything polls or sends: a second daemon on a busy port stops here, in one line
      // one Host/Origin policy for the HTTP handler and the WebSocket upgrade
      const access = createAccessPolicy(config.server);
      httpServer = createHttpServer({
        metrics,
        readiness,
        logger: log("http"),
        access,
        metricsToken: config.server.metricsToken,
        maxConnections: config.server.maxConnections,
        nowMs,
      });
      ws = createWsServer({
        access,
        server: httpServer,
        path: "/ws",
        source: hub,
        config: config.server,
        metrics,
        logger: log("ws"),
        knownPairs: () => knownPairs(config),
        knownRules: () => knownRules,
        version: VERSION,
        nowMs,
      });
      const { port } = await listen(httpServer, config.server.host, config.server.port);
      listeningPort = port;

      // 3. upstream: the embedded simulator or a real base URL, one keep-alive pool for everything
      let baseUrl = config.upstream.url;
      let vaultBaseUrl = config.upstream.vaultUrl;
      if (embedded) {
        simulator = await startSimulator({
          host: "127.0.0.1",
          port: 0,
          seed: sim.seed,
          clock: simClock,
          apiKeys: sim.apiKeys,
          ...(sim.scenario === "" ? {} : { scenario: resolveScenario(sim.scenario) }),
        });
        baseUrl = simulator.url;
        vaultBaseUrl = simulator.vaultUrl;
        log("upstream").info({ url: redactUrl(baseUrl) }, "embedded simulator started");
      }
      upstreamUrl = baseUrl;
      dispatcher = createDispatcher({ connections: config.upstream.connections });
      const client = createUpstreamClient(config.upstream, {
        baseUrl,
        vaultBaseUrl: vaultBaseUrl === "" ? baseUrl : vaultBaseUrl,
        dispatcher,
        metrics,
        random,
        onSkippedItem: createSkippedItemHandler(metrics, log("upstream"), nowMs),
      });

      // 4. sinks: stdout and chat-ops
      logSink = startLogSink(hub, log("alerts"));
      chatops = createChatOpsSinks({
        sinks: config.sinks,
        source: bus,
        stateDir: config.state.dir,
        dispatcher,
        metrics,
        logger: log("chatops"),
        raise: (alert) => bus.publishAlert(alert),
        nowMs,
        random,
        generatorUrl,
        isHealthy: () => selfHealth().ready,
      });
      await chatops.start();
      resolveOrphanSinkErrors(hub, sinkErrors, config.sinks, nowMs());
      for (const stall of staleStalls) hub.publishAlert(stallEndedByRestart(stall, nowMs()));
      // 5. the pipeline, guarded against blaming the upstream for the daemon's own stalls
      const pollTimeoutMs = config.upstream.retry.maxElapsedMs + config.upstream.timeoutMs;
      loopMonitor = createLoopMonitor({
        logger: log("loop"),
        nowMs,
        settings: {
          sampleIntervalMs: LOOP_SAMPLE_INTERVAL_MS,
          thresholdMs: config.alerts.monitorStalled.thresholdMs,
          // every poll in flight during the stall has ended (or timed out) by then
          holdMs: pollTimeoutMs + LOOP_SAMPLE_INTERVAL_MS,
        },
        publish: (alert) => bus.publishAlert(alert),
        metrics,
        ...(deps.onLoopHealthy === undefined ? {} : { onHealthy: deps.onLoopHealthy }),
      });
      runner = createMonitorRunner(
        {
          client,
          hub,
          metrics,
          logger: log("pipeline"),
          nowMs: marketNowMs,
          wallNowMs: nowMs,
          random,
          pollTimeoutMs,
          holdingVerdicts: () => loopMonitor?.holding() ?? false,
        },
        engineState,
      );
      runner.update(config.monitors, config.rules);
      for (const note of adaptationNotes(config.monitors))
        log("monitors").info({ note }, "request adapted to upstream rules");

      const watchdog = createWatchdogAlert({
        enabled: () => config.alerts.watchdog.enabled,
        readiness: selfHealth,
        publish: (alert) => bus.publishAlert(alert),
        nowMs,
      });
      timers.push(setInterval(() => watchdog.check(), WATCHDOG_CHECK_INTERVAL_MS).unref());
      timers.push(setInterval(periodicCheckpoint, CHECKPOINT_INTERVAL_MS).unref());
      timers.push(setInterval(() => store?.sync(), JOURNAL_SYNC_INTERVAL_MS).unref());
      hub.publishLifecycle("started", { port, upstream: simulator === undefined ? "remote" : "simulator" });
      started = true;
      logger.info({ port, host: config.server.host, upstream: redactUrl(baseUrl) }, "pragma-monitor started");
      for (const warning of configWarnings(config))
        logger.warn({ key: warning.key }, `insecure configuration: ${warning.reason}`);
      return { port };
    },

    async stop(deadlineMs) {
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
      if (started) await step("hub", () => hub?.publishLifecycle("stopping"));
      started = false;
      for (const timer of timers.splice(0)) clearInterval(timer);
      loopMonitor?.stop();
      await step("pipeline", () => runner?.stop());
      await step("chatops", () => chatops?.stop(remaining()));
      await step("ws", () => ws?.close(Math.min(remaining(), 2_000)));
      await step("http", () => closeServer(httpServer));
      await step("checkpoint", checkpoint);
      await step("state", () => store?.close()); // fsyncs the journal and releases the lock even if the checkpoint failed
      await step("simulator", () => simulator?.close());
      await step("upstream", () => dispatcher?.close());
      logSink?.unsubscribe();
      hub?.complete();
      return { failedSteps };
    },

    async reload(next) {
      const previous = config;
      config = next;
      knownRules = ruleNames(next);
      runner?.update(next.monitors, next.rules);
      if (JSON.stringify(previous.sinks) !== JSON.stringify(next.sinks)) {
        await chatops?.reconfigure(next.sinks, Math.min(next.shutdown.drainTimeoutMs, 5_000));
        const firingSinkErrors = requireHub()
          .activeAlerts()
          .filter((alert) => alert.rule === "sink_error");
        resolveOrphanSinkErrors(requireHub(), firingSinkErrors, next.sinks, nowMs());
      }
      const restartOnly = (["server", "upstream", "state"] as const).filter(
        (key) => JSON.stringify(previous[key]) !== JSON.stringify(next[key]),
      );
      if (restartOnly.length > 0)
        logger.warn({ sections: restartOnly }, "these sections change only on restart");
      requireHub().publishLifecycle("config_reloaded", {
        targets: runner?.targetIds().length ?? 0,
        rules: next.rules.length,
      });
    },
  };
}

/** The alert engine as the last run left it: the checkpoint, then the alerts announced after it (never re-announced). */
function restoreEngineState(recovered: RecoveredState): MonitorState {
  // an engine that failed validation was logged by the state store and is null here
  const engine = recovered.checkpoint?.engine ?? null;
  return restoreAnnounced(
    engine === null ? createMonitorState() : importAlertState(engine),
    recovered.alertsAfterCheckpoint.map((e) => e.alert),
  );
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
  },
): PragmaClient {
  const { metrics } = options;
  return createPragmaClient({
    baseUrl: options.baseUrl,
    vaultBaseUrl: options.vaultBaseUrl,
    ...(upstream.apiKey === "" ? {} : { apiKey: upstream.apiKey }),
    dispatcher: options.dispatcher,
    timeoutMs: upstream.timeoutMs,
    retry: upstream.retry,
    random: options.random,
    observer: (sample) => {
      metrics.upstreamLatency.observe({ endpoint: sample.endpoint }, sample.durationMs / 1000);
      metrics.upstreamRequests.inc({
        endpoint: sample.endpoint,
        status: String(sample.status ?? sample.errorCode),
      });
    },
    onSkippedItem: options.onSkippedItem,
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

/** Resolve restored `sink_error` alerts whose sink is no longer configured (nothing else ever would). */
function resolveOrphanSinkErrors(
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
function stallEndedByRestart(alert: AlertPayload, nowMs: number): AlertPayload {
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
function openStateDir(dir: string, open: () => StateStore): StateStore {
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
