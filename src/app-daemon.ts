// The daemon's parts as the start steps fill them in, and what several steps read of them (readiness, the hub).
import type { Server } from "node:http";
import type { Logger } from "pino";
import type { Subscription } from "rxjs";
import type { Dispatcher } from "undici";
import type { ClusterMode } from "./cluster/cluster-mode.js";
import type { ClusterJournal } from "./cluster/journal-stream.js";
import type { PublishedAlerts } from "./cluster/published-alerts.js";
import type { AppConfig } from "./config/types.js";
import { type AlertPayload, RULE_KINDS } from "./domain/events.js";
import type { MonitorState } from "./domain/monitor.js";
import type { Metrics } from "./metrics.js";
import type { EventHub } from "./pipeline/event-hub.js";
import type { MonitorRunner } from "./pipeline/monitor-runner.js";
import {
  decideReadiness,
  decideSelfHealth,
  type Readiness,
  type ReadinessStatus,
} from "./domain/readiness.js";
import type { LoopMonitor } from "./pipeline/loop-monitor.js";
import type { ChatOpsSinks } from "./sinks/chatops/index.js";
import type { WsServer } from "./sinks/ws/server.js";
import type { Silencer } from "./pipeline/silencer.js";
import { createMaintenanceCalendar } from "./domain/maintenance.js";
import type { Silence } from "./domain/silence.js";
import type { ProcessIdentity } from "./state/lock-file.js";
import type { StateStore } from "./state/state-store.js";
import type { DaemonRecording } from "./record/daemon-recording.js";

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

/** What a stop achieved: the steps that failed (each logged with its error), empty when all went well. */
export interface StopReport {
  readonly failedSteps: readonly string[];
}

/** The daemon's parts, filled in by the start steps in order; `config` and `knownRules` change on reload. */
export interface Daemon {
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
  /** The embedded simulator when `upstream.url` is "simulator" (only app.ts starts one): closed on stop. */
  simulator: { close(): Promise<void> } | undefined;
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
export interface Restored {
  readonly hub: EventHub;
  readonly engineState: MonitorState;
  /** `sink_error` alerts firing in the journal: the sinks resolve their own, the gone ones are resolved here. */
  readonly sinkErrors: readonly AlertPayload[];
  /** A `monitor_stalled` left firing by the previous run (killed while stalled): over, resolved once sinks run. */
  readonly staleStalls: readonly AlertPayload[];
}

/** The config's maintenance windows as silences at a given time (compiled once per config). */
export function maintenanceOf(config: AppConfig): (nowMs: number) => readonly Silence[] {
  const calendar = createMaintenanceCalendar(config.maintenance);
  return (nowMs) => calendar.silencesAt(nowMs);
}

/** The silencer, once `openState` made it. */
export function requireSilencer(app: Daemon): Silencer {
  if (app.silencer === undefined) throw new Error("app not started");
  return app.silencer;
}

/** The event hub, once `openState` made it. */
export function requireHub(app: Daemon): EventHub {
  if (app.hub === undefined) throw new Error("app not started");
  return app.hub;
}

/** What readiness reads of the daemon itself: its port listening and its pipeline started. */
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
export function readiness(app: Daemon): Readiness {
  const base = decideReadiness(readinessStatus(app));
  return app.cluster?.readiness(base) ?? base;
}

/** What the heartbeat and watchdog report: the daemon itself works (a failing upstream is an alert, not its death). */
export function selfHealth(app: Daemon): Readiness {
  return decideSelfHealth(readinessStatus(app));
}

/** Rule names a WebSocket `rules` filter may use: every rule kind and every configured rule id (as sink filters). */
export function ruleNames(config: AppConfig): ReadonlySet<string> {
  return new Set([...RULE_KINDS, ...config.rules.map((rule) => rule.id)]);
}
