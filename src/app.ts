// Composition root: builds the whole daemon (upstream, pipeline, sinks, servers, state) from injected dependencies.
import { Registry } from "prom-client";
import type { Dispatcher } from "undici";
import { createPublishedAlerts } from "./cluster/published-alerts.js";
import { redactUrl } from "./config/redact.js";
import type { AppConfig } from "./config/types.js";
import { configWarnings } from "./config/warnings.js";
import { componentLogger } from "./logger.js";
import { createMetrics, type Metrics } from "./metrics.js";
import type { EventSource } from "./pipeline/event-hub.js";
import type { Readiness } from "./domain/readiness.js";
import { type RunningSimulator, startSimulator } from "./simulator/server.js";
import { createSystemClock, type SimClock } from "./simulator/clock.js";
import { resolveScenario } from "./simulator/scenario.js";
import { createDispatcher, createPragmaClient } from "./upstream/client.js";
import { streamSettingsOf } from "./upstream-reload.js";
import { openDaemonRecording } from "./record/daemon-recording.js";
import type { PragmaClient } from "./upstream/types.js";
import {
  type AppDeps,
  type Daemon,
  readiness,
  requireHub,
  requireSilencer,
  ruleNames,
  type StopReport,
} from "./app-daemon.js";
import { openState, startPeriodicTasks } from "./app-state.js";
import { openPort } from "./app-port.js";
import { startPipeline, startSinks } from "./app-pipeline.js";
import { createSkippedItemHandler, createUpstreamClient, streamClientDeps } from "./app-upstream.js";
import { reloadApp, stopApp } from "./app-lifecycle.js";

export type { AppDeps, StopReport } from "./app-daemon.js";

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
