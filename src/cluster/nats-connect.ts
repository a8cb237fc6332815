// The options every connection of a cluster member opens NATS with (leases and KV, the event log, the sinks).
import type { ConnectionOptions } from "@nats-io/transport-node";
import type { ClusterConfig } from "../config/types.js";

/**
 * Connection options for `nats` under the connection name `name`: reconnect for ever, credentials when set, and
 * no async stack traces. With them, every request (each KV write and JetStream publish) built two errors with
 * captured stacks before sending, used only should it time out: at 50 writes a second a member spent ~8 ms CPU/s
 * on them (profiled); a timeout still rejects with the same error types and messages.
 */
export function natsConnectOptions(
  nats: ClusterConfig["nats"],
  name: string,
  timeoutMs: number,
): ConnectionOptions {
  return {
    servers: [...nats.servers],
    name,
    timeout: timeoutMs,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    noAsyncTraces: true,
    ...(nats.user === "" ? {} : { user: nats.user }),
    ...(nats.password === "" ? {} : { pass: nats.password }),
    ...(nats.token === "" ? {} : { token: nats.token }),
  };
}
