// The sinks of a cluster member: alert sinks delivered through the shared per-sink consumers, heartbeats per member.
import type { AlertSinkConfig, SinkConfig } from "../config/types.js";
import type { ChatOpsSinks } from "../sinks/chatops/index.js";
import { createSinkConsumers, type SinkConsumersDeps } from "./sink-consumer.js";

/**
 * The chat-ops surface of a member: `heartbeats` (built over the heartbeat sinks only: each member pings for
 * itself) and one shared consumer per enabled alert sink, so each event is notified once across the cluster.
 */
export function clusterSinks(
  heartbeats: ChatOpsSinks,
  sinks: readonly SinkConfig[],
  deps: SinkConsumersDeps,
): ChatOpsSinks {
  const consumers = createSinkConsumers(deps);
  return {
    async start() {
      await heartbeats.start();
      consumers.start(alertSinks(sinks));
    },
    async stop(deadlineMs) {
      await Promise.all([consumers.stop(), heartbeats.stop(deadlineMs)]);
    },
    async reconfigure(next, deadlineMs) {
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
