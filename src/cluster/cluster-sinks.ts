// The sinks of a cluster member: alert sinks delivered through the shared per-sink consumers, heartbeats per member.
import type { AlertSinkConfig, SinkConfig } from "../config/types.js";
import type { Observable } from "rxjs";
import type { BusEvent } from "../domain/events.js";
import type { ChatOpsSinks } from "../sinks/chatops/index.js";
import { startClusterErrorNotifier, type ClusterErrorNotifier } from "./cluster-error-notify.js";
import { createSinkConsumers, type SinkConsumersDeps } from "./sink-consumer.js";

/** The sink consumers' needs, and the member's own bus (its `cluster_error` transitions are sent from here). */
export interface ClusterSinksDeps extends SinkConsumersDeps {
  readonly localEvents$: Observable<BusEvent>;
}

/**
 * The chat-ops surface of a member: `heartbeats` (built over the heartbeat sinks only: each member pings for
 * itself), one shared consumer per enabled alert sink, so each event is notified once across the cluster, and
 * the member's own `cluster_error` sent straight to the alert sinks (NATS, which the consumers need, is what failed).
 */
export function clusterSinks(
  heartbeats: ChatOpsSinks,
  sinks: readonly SinkConfig[],
  deps: ClusterSinksDeps,
): ChatOpsSinks {
  const consumers = createSinkConsumers(deps);
  let clusterErrors: ClusterErrorNotifier | undefined;
  return {
    async start() {
      await heartbeats.start();
      consumers.start(alertSinks(sinks));
      clusterErrors = startClusterErrorNotifier({ ...deps, events$: deps.localEvents$ }, alertSinks(sinks));
    },
    async stop(deadlineMs) {
      clusterErrors?.stop();
      await Promise.all([consumers.stop(), heartbeats.stop(deadlineMs)]);
    },
    async reconfigure(next, deadlineMs) {
      clusterErrors?.reconfigure(alertSinks(next));
      await consumers.reconfigure(alertSinks(next));
      await heartbeats.reconfigure(heartbeatSinks(next), deadlineMs);
    },
    status: () => [...consumers.status(), ...heartbeats.status()],
  };
}

/** The enabled alert sinks of a sink list. */
function alertSinks(sinks: readonly SinkConfig[]): AlertSinkConfig[] {
  return sinks.flatMap((sink) => (sink.enabled && sink.kind !== "heartbeat" ? [sink] : []));
}

/** The heartbeat sinks of a sink list (what each member runs on its own). */
export function heartbeatSinks(sinks: readonly SinkConfig[]): SinkConfig[] {
  return sinks.filter((sink) => sink.kind === "heartbeat");
}
