// Composition root: builds the whole daemon (upstream, pipeline, sinks, servers, state) from injected dependencies.
import type { Server } from "node:http";
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
} from "./domain/monitor.js";
import { createAccessPolicy } from "./http/access.js";
import { createHttpServer, listen } from "./http/server.js";
import { createMetrics, type Metrics } from "./metrics.js";
import { createEventHub, type EventHub, type EventSource } from "./pipeline/event-hub.js";
import { createMonitorRunner, type MonitorRunner, type Readiness } from "./pipeline/monitor-runner.js";
import { startSimulator, type RunningSimulator } from "./simulator/server.js";
import { createSystemClock } from "./simulator/clock.js";
import { resolveScenario } from "./simulator/scenario.js";
import { createChatOpsSinks, type ChatOpsSinks } from "./sinks/chatops/index.js";
import { startLogSink } from "./sinks/log-sink.js";
import { createWsServer, type WsServer } from "./sinks/ws/server.js";
import type { ProcessIdentity } from "./state/lock-file.js";
import { firingSinkErrors } from "./state/sink-errors.js";
import { openStateStore, type StateStore } from "./state/state-store.js";
import { createDispatcher, createPragmaClient } from "./upstream/client.js";
import { VERSION } from "./version.js";

/** Everything the daemon takes from the outside world. */
export interface AppDeps {
  readonly config: AppConfig;
  readonly logger: Logger;
  readonly nowMs: () => number;
  readonly random: () => number;
  /** This process, to lock `state.dir` against a second daemon (omitted in in-process tests). */
  readonly process?: ProcessIdentity;
}

/** A running (or runnable) daemon. */
export interface App {
  /** Start everything; resolves once the HTTP/WebSocket port listens. */
  start(): Promise<{ readonly port: number }>;
  /** Graceful stop: `stopping` event, pollers off, sinks drained up to the deadline, clients closed with 1001. */
  stop(deadlineMs: number): Promise<void>;
  /** Apply a new, already validated config: only changed targets, rules and sinks are rebuilt. */
  reload(config: AppConfig): Promise<void>;
  readiness(): Readiness;
  readonly events: EventSource;
  readonly metrics: Metrics;
  /** Base URL of the upstream actually polled (the embedded simulator's when url = "simulator"). */
  upstreamUrl(): string;
}

/** How often the alert checkpoint is written and the journal fsync'd. */
const CHECKPOINT_INTERVAL_MS = 5_000;
const JOURNAL_SYNC_INTERVAL_MS = 1_000;

/** Build the daemon; nothing runs until `start()`. */
export function createApp(deps: AppDeps): App {
  const { logger, nowMs, random } = deps;
  let config = deps.config;
  let knownRules = ruleNames(config);
  const metrics = createMetrics(new Registry());
  const log = (component: string): Logger => logger.child({ component });

  let store: StateStore | undefined;
  let hub: EventHub | undefined;
  let simulator: RunningSimulator | undefined;
  let dispatcher: Dispatcher | undefined;
  let runner: MonitorRunner | undefined;
  let httpServer: Server | undefined;
  let ws: WsServer | undefined;
  let chatops: ChatOpsSinks | undefined;
  let logSink: Subscription | undefined;
  let upstreamUrl = "";
  const timers: NodeJS.Timeout[] = [];

  const requireHub = (): EventHub => {
    if (hub === undefined) throw new Error("app not started");
    return hub;
  };

  const checkpoint = (): void => {
    if (store === undefined || runner === undefined || hub === undefined) return;
    try {
      store.saveCheckpoint({ lastSeq: hub.lastSeq(), engine: exportAlertState(runner.state()) });
    } catch (error) {
      log("state").error({ err: String(error) }, "could not write the alert checkpoint");
    }
  };

  const events: EventSource = {
    get events$() {
      return requireHub().events$;
    },
    lastSeq: () => requireHub().lastSeq(),
    replay: (since) => requireHub().replay(since),
    activeAlerts: () => requireHub().activeAlerts(),
    latestPrices: () => requireHub().latestPrices(),
  };

  return {
    events,
    metrics,
    upstreamUrl: () => upstreamUrl,
    readiness() {
      const reasons: string[] = [];
      if (httpServer === undefined || !httpServer.listening) reasons.push("HTTP server not listening");
      if (runner === undefined) reasons.push("pipeline not started");
      else reasons.push(...runner.readiness().reasons);
      return { ready: reasons.length === 0, reasons };
    },

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
      store = openStateStore({
        dir: config.state.dir,
        journalCapacity: config.server.journalSize,
        nowMs,
        logger: log("state"),
        ...(deps.process === undefined ? {} : { process: deps.process }),
      });
      const { recovered } = store;
      let engineState = createMonitorState();
      if (recovered.checkpoint !== null) {
        try {
          engineState = importAlertState(recovered.checkpoint.engine);
        } catch (error) {
          log("state").error(
            { err: String(error) },
            "alert checkpoint invalid: rebuilding alert state from the journal",
          );
        }
      }
      engineState = restoreAnnounced(
        engineState,
        recovered.alertsAfterCheckpoint.map((e) => e.alert),
      );
      const persist = store.persistEvent.bind(store);
      hub = createEventHub({ journal: recovered.journal, nowMs: marketNowMs, version: VERSION, persist });
      // sink_error alerts come from the sinks, not the engine: restore them from the journal so the
      // sink resolves its own on recovery; one whose sink is gone from the config resolves below
      const sinkErrors = firingSinkErrors(recovered.journal.entries());
      hub.restoreActive([...activeAlerts(engineState), ...sinkErrors]);

      // 2. upstream: the embedded simulator or a real base URL, one keep-alive pool for everything
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
      const client = createPragmaClient({
        baseUrl,
        vaultBaseUrl: vaultBaseUrl === "" ? baseUrl : vaultBaseUrl,
        ...(config.upstream.apiKey === "" ? {} : { apiKey: config.upstream.apiKey }),
        dispatcher,
        timeoutMs: config.upstream.timeoutMs,
        retry: config.upstream.retry,
        random,
        observer: (sample) => {
          metrics.upstreamLatency.observe({ endpoint: sample.endpoint }, sample.durationMs / 1000);
          metrics.upstreamRequests.inc({
            endpoint: sample.endpoint,
            status: String(sample.status ?? sample.errorCode),
          });
        },
      });

      // 3. sinks: stdout, chat-ops, then the HTTP + WebSocket server
      logSink = startLogSink(hub, logger);
      const bus = hub;
      chatops = createChatOpsSinks({
        sinks: config.sinks,
        source: bus,
        stateDir: config.state.dir,
        dispatcher,
        metrics,
        logger: log("sinks"),
        raise: (alert) => bus.publishAlert(alert),
        nowMs,
        random,
      });
      await chatops.start();
      resolveOrphanSinkErrors(hub, sinkErrors, config.sinks, nowMs());
      // one Host/Origin policy for the HTTP handler and the WebSocket upgrade
      const access = createAccessPolicy(config.server);
      httpServer = createHttpServer({
        metrics,
        readiness: () => this.readiness(),
        logger: log("http"),
        access,
        metricsToken: config.server.metricsToken,
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

      // 4. the pipeline
      runner = createMonitorRunner(
        {
          client,
          hub,
          metrics,
          logger: log("pipeline"),
          nowMs: marketNowMs,
          random,
          pollTimeoutMs: config.upstream.retry.maxElapsedMs + config.upstream.timeoutMs,
        },
        engineState,
      );
      runner.update(config.monitors, config.rules);

      const { port } = await listen(httpServer, config.server.host, config.server.port);
      timers.push(setInterval(checkpoint, CHECKPOINT_INTERVAL_MS).unref());
      timers.push(setInterval(() => store?.sync(), JOURNAL_SYNC_INTERVAL_MS).unref());
      hub.publishLifecycle("started", { port, upstream: simulator === undefined ? "remote" : "simulator" });
      logger.info({ port, host: config.server.host, upstream: redactUrl(baseUrl) }, "pragma-monitor started");
      for (const warning of configWarnings(config))
        logger.warn({ key: warning.key }, `insecure configuration: ${warning.reason}`);
      return { port };
    },

    async stop(deadlineMs) {
      const deadline = nowMs() + deadlineMs;
      const remaining = (): number => Math.max(0, deadline - nowMs());
      const step = async (name: string, action: () => unknown): Promise<void> => {
        try {
          await action();
        } catch (error) {
          logger.error({ component: name, err: String(error) }, "error while stopping");
        }
      };
      if (hub !== undefined) await step("hub", () => hub?.publishLifecycle("stopping"));
      for (const timer of timers.splice(0)) clearInterval(timer);
      await step("pipeline", () => runner?.stop());
      await step("chatops", () => chatops?.stop(remaining()));
      await step("ws", () => ws?.close(Math.min(remaining(), 2_000)));
      await step("http", () => closeServer(httpServer));
      await step("state", () => {
        checkpoint();
        store?.close();
      });
      await step("simulator", () => simulator?.close());
      await step("upstream", () => dispatcher?.close());
      logSink?.unsubscribe();
      hub?.complete();
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
