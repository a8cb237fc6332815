// The operator API's view of the running daemon: every part read at request time, so reloads and restarts of parts apply.
import type { AppConfig } from "./config/types.js";
import { withExternalLabels } from "./domain/external-labels.js";
import { alertInhibitors, pendingAlerts } from "./domain/monitor.js";
import type { Readiness } from "./domain/readiness.js";
import type { ApiDeps } from "./http/api/index.js";
import type { EventHub } from "./pipeline/event-hub.js";
import type { MonitorRunner } from "./pipeline/monitor-runner.js";
import type { Silencer } from "./pipeline/silencer.js";
import type { ChatOpsSinks } from "./sinks/chatops/index.js";
import { VERSION } from "./version.js";

/** The parts of the daemon the API reads; the getters answer undefined for a part not started (yet). */
export interface ApiSources {
  readonly hub: EventHub;
  readonly runner: () => MonitorRunner | undefined;
  readonly chatops: () => ChatOpsSinks | undefined;
  readonly readiness: () => Readiness;
  readonly config: () => AppConfig;
  /** Base URL actually polled ("" until the upstream is connected). */
  readonly upstreamUrl: () => string;
  /** The daemon's clock (uptime, poll times). */
  readonly nowMs: () => number;
  /** The market's clock (alert times; the embedded simulator's when it runs faster than real time). */
  readonly marketNowMs: () => number;
  readonly startedAtMs: () => number;
  readonly configGeneration: () => number;
  /** Cluster mode's status (null when it is off). */
  readonly cluster: ApiDeps["cluster"];
  readonly silencer: Silencer;
}

/** What the API routes read, built from the daemon's parts. */
export function operatorApiDeps(sources: ApiSources): ApiDeps {
  const { hub } = sources;
  return {
    version: VERSION,
    nowMs: sources.nowMs,
    startedAtMs: sources.startedAtMs,
    configGeneration: sources.configGeneration,
    cluster: sources.cluster,
    readiness: sources.readiness,
    sinks: () => sources.chatops()?.status() ?? [],
    upstream: () => ({
      url: sources.upstreamUrl(),
      simulator: sources.config().upstream.url === "simulator",
    }),
    targetCount: () => sources.runner()?.targetIds().length ?? 0,
    journal: hub,
    replay: (since) => hub.replay(since),
    firingAlerts: () => hub.activeAlerts(),
    engineAlerts: () => {
      const runner = sources.runner();
      if (runner === undefined) return { pending: [], inhibitors: () => [] };
      const state = runner.state();
      // stamped as the hub stamps what it publishes, so a pending alert shows the labels it will fire with
      const external = sources.config().alerts.externalLabels;
      const pending = pendingAlerts(state, sources.marketNowMs()).map((entry) => ({
        ...entry,
        alert: withExternalLabels(entry.alert, external),
      }));
      return { pending, inhibitors: alertInhibitors(state) };
    },
    targetReports: (maxPoints) => sources.runner()?.targetReports(maxPoints) ?? [],
    silencer: sources.silencer,
    // a pending alert shows the silences that would mute it if it fired now
    silencedBy: (alert) => sources.silencer.silencing(alert),
  };
}
