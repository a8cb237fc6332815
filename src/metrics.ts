// Every Prometheus metric the daemon exports, created on one injected registry (no global default registry).
import { Counter, Gauge, Histogram, collectDefaultMetrics, type Registry } from "prom-client";

/** The daemon's metrics, grouped by the component that records them. */
export interface Metrics {
  readonly registry: Registry;
  // upstream and pipeline
  readonly polls: Counter<"endpoint" | "outcome">;
  readonly pollFailures: Counter<"endpoint" | "code">;
  readonly upstreamLatency: Histogram<"endpoint">;
  readonly upstreamRequests: Counter<"endpoint" | "status">;
  readonly targets: Gauge<"kind">;
  // alerting
  readonly alertsFiring: Gauge<"rule" | "severity">;
  readonly alertTransitions: Counter<"rule" | "status" | "reason">;
  readonly journalSize: Gauge;
  readonly droppedEvents: Counter<"component" | "reason">;
  // WebSocket server
  readonly wsClients: Gauge;
  readonly wsMessagesIn: Counter<"op">;
  readonly wsMessagesOut: Counter<"type">;
  readonly wsSlowConsumers: Counter;
  readonly wsRejected: Counter<"reason">;
  readonly httpRejected: Counter<"reason">;
  // chat-ops sinks
  readonly sinkDeliveries: Counter<"sink" | "outcome">;
  readonly sinkOutboxSize: Gauge<"sink">;
  readonly sinkDeadLetters: Counter<"sink">;
  readonly sinkDigests: Counter<"sink">;
}

/** Create every metric on `registry`; `collectProcess` adds process stats and event-loop lag (prom-client defaults). */
export function createMetrics(
  registry: Registry,
  options: { readonly collectProcess?: boolean } = {},
): Metrics {
  if (options.collectProcess ?? true)
    collectDefaultMetrics({ register: registry, prefix: "pragma_monitor_" });
  const registers = [registry];
  return {
    registry,
    polls: new Counter({
      name: "pragma_monitor_polls_total",
      help: "Polls completed, by endpoint and outcome (ok|error).",
      labelNames: ["endpoint", "outcome"],
      registers,
    }),
    pollFailures: new Counter({
      name: "pragma_monitor_poll_failures_total",
      help: "Failed polls by endpoint and error code.",
      labelNames: ["endpoint", "code"],
      registers,
    }),
    upstreamLatency: new Histogram({
      name: "pragma_monitor_upstream_request_duration_seconds",
      help: "Latency of each upstream HTTP attempt.",
      labelNames: ["endpoint"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    upstreamRequests: new Counter({
      name: "pragma_monitor_upstream_requests_total",
      help: "Upstream HTTP attempts by endpoint and status (or error code).",
      labelNames: ["endpoint", "status"],
      registers,
    }),
    targets: new Gauge({
      name: "pragma_monitor_targets",
      help: "Monitored targets by kind.",
      labelNames: ["kind"],
      registers,
    }),
    alertsFiring: new Gauge({
      name: "pragma_monitor_alerts_firing",
      help: "Alerts currently firing, by rule and severity.",
      labelNames: ["rule", "severity"],
      registers,
    }),
    alertTransitions: new Counter({
      name: "pragma_monitor_alert_transitions_total",
      help: "Alert transitions published, by rule, status and reason.",
      labelNames: ["rule", "status", "reason"],
      registers,
    }),
    journalSize: new Gauge({
      name: "pragma_monitor_journal_events",
      help: "Events held in the in-memory journal.",
      registers,
    }),
    droppedEvents: new Counter({
      name: "pragma_monitor_dropped_events_total",
      help: "Events dropped because a bounded buffer was full, by component and reason.",
      labelNames: ["component", "reason"],
      registers,
    }),
    wsClients: new Gauge({
      name: "pragma_monitor_ws_clients",
      help: "Connected WebSocket clients.",
      registers,
    }),
    wsMessagesIn: new Counter({
      name: "pragma_monitor_ws_messages_in_total",
      help: "WebSocket messages received, by op (or invalid).",
      labelNames: ["op"],
      registers,
    }),
    wsMessagesOut: new Counter({
      name: "pragma_monitor_ws_messages_out_total",
      help: "WebSocket messages sent, by type.",
      labelNames: ["type"],
      registers,
    }),
    wsSlowConsumers: new Counter({
      name: "pragma_monitor_ws_slow_consumers_total",
      help: "WebSocket clients closed with 1013 for exceeding the buffered-bytes limit.",
      registers,
    }),
    wsRejected: new Counter({
      name: "pragma_monitor_ws_rejected_total",
      help: "WebSocket connections or messages refused, by reason.",
      labelNames: ["reason"],
      registers,
    }),
    httpRejected: new Counter({
      name: "pragma_monitor_http_rejected_total",
      help: "HTTP requests refused before routing, by reason (host, unauthorized).",
      labelNames: ["reason"],
      registers,
    }),
    sinkDeliveries: new Counter({
      name: "pragma_monitor_sink_deliveries_total",
      help: "Chat-ops delivery attempts, by sink and outcome.",
      labelNames: ["sink", "outcome"],
      registers,
    }),
    sinkOutboxSize: new Gauge({
      name: "pragma_monitor_sink_outbox_messages",
      help: "Messages waiting in each sink's outbox.",
      labelNames: ["sink"],
      registers,
    }),
    sinkDeadLetters: new Counter({
      name: "pragma_monitor_sink_dead_letters_total",
      help: "Messages given up on and written to the dead-letter file.",
      labelNames: ["sink"],
      registers,
    }),
    sinkDigests: new Counter({
      name: "pragma_monitor_sink_digests_total",
      help: "Digest messages sent in place of several rate-limited ones.",
      labelNames: ["sink"],
      registers,
    }),
  };
}
