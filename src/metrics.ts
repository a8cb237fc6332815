// Every Prometheus metric the daemon exports, created on one injected registry (no global default registry).
import { Counter, Gauge, Histogram, collectDefaultMetrics, type Registry } from "prom-client";
import { ChildCounter, ChildGauge, ChildHistogram } from "./metric-children.js";
import { RULE_KINDS, SEVERITIES, type AlertPayload } from "./domain/events.js";
import type { SilenceState } from "./domain/silence.js";
import { VERSION } from "./version.js";

/** State the daemon owns that some metrics read at scrape time (bound once the app has started). */
export interface MetricSources {
  /** Every alert firing on the event bus, whatever published it (rule engine or sinks). */
  activeAlerts(): readonly Pick<AlertPayload, "rule" | "severity">[];
  /** Events held in the in-memory journal. */
  journalSize(): number;
  /** The app's readiness verdict (what /readyz answers). */
  ready(): boolean;
  /** The state of every silence and maintenance window (absent: none exported). */
  silenceStates?(): readonly SilenceState[];
}

/**
 * How often prom-client samples the event loop's lag for `nodejs_eventloop_lag_*` (ms). Its default, 10 ms, wakes
 * an otherwise idle daemon 100 times a second (a streamed daemon between two messages): ~2 ms CPU/s on the 2-core
 * reference machine. Every 100 ms still gives 150 samples between two 15 s scrapes. Each sample is the interval
 * plus the lag (an idle loop reads ~0.1 s), so the shipped alert (docs/prometheus) fires above 0.6 s: half a
 * second late for 5 minutes, as before.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * prom-client's default metrics that promtool rejects: gauges named `_total`. Each is the sum over the
 * `type` label of the gauge of the same name without `_total`, which stays exported, so nothing is lost.
 */
const LINT_FAILING_DEFAULTS = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
];

/** Status/reason pairs an alert transition can carry (Alertmanager's vocabulary, DESIGN §3). */
const TRANSITIONS = [
  { status: "firing", reason: "first" },
  { status: "firing", reason: "repeat" },
  { status: "resolved", reason: "resolved" },
] as const;

/** The daemon's metrics, grouped by the component that records them. */
export interface Metrics {
  readonly registry: Registry;
  // upstream and pipeline
  /** Bind `childFor({endpoint, outcome})` once per target (hot path: one poll, one inc). */
  readonly polls: ChildCounter<"endpoint" | "outcome">;
  readonly pollFailures: Counter<"endpoint" | "code">;
  readonly upstreamLatency: ChildHistogram<"endpoint">;
  readonly upstreamRequests: ChildCounter<"endpoint" | "status">;
  readonly upstreamSkippedItems: Counter<"endpoint">;
  readonly targets: Gauge<"kind">;
  // the SSE price stream
  readonly streamConnections: Gauge<"interval">;
  readonly streamEvents: Counter<"interval" | "kind">;
  readonly streamReconnects: Counter<"interval" | "code">;
  readonly streamFallbacks: Counter<"interval">;
  readonly streamTargets: Gauge<"mode">;
  // alerting
  readonly targetLastSuccess: ChildGauge<"target">;
  readonly alertsFiring: Gauge<"rule" | "severity">;
  readonly alertTransitions: Counter<"rule" | "status" | "reason">;
  readonly journalSize: Gauge;
  readonly droppedEvents: Counter<"component" | "reason">;
  // the recording (docs/recording.md)
  readonly recordingLines: Counter<"outcome">;
  // WebSocket server
  readonly wsClients: Gauge;
  readonly wsMessagesIn: Counter<"op">;
  readonly wsMessagesOut: Counter<"type">;
  readonly wsSlowConsumers: Counter;
  readonly wsRejected: Counter<"reason">;
  readonly wsResumeRangesForgotten: Counter;
  readonly httpRejected: Counter<"reason">;
  // chat-ops sinks
  readonly sinkDeliveries: Counter<"sink" | "outcome">;
  readonly sinkOutboxSize: Gauge<"sink">;
  readonly sinkDeadLetters: Counter<"sink">;
  /** Group notifications delivered (grouping sinks). */
  readonly sinkGroupNotifications: Counter<"sink">;
  /** Notification groups that remember firing alerts. */
  readonly sinkGroups: Gauge<"sink">;
  readonly sinkDeliveryDuration: Histogram<"sink">;
  /** Alert transitions a silence or maintenance window kept from a sink. */
  readonly sinkSilenced: Counter<"sink">;
  /** Silences and maintenance windows by state (read at scrape time). */
  readonly silences: Gauge<"state">;
  /** Silences of the file whose updatedAt was too far ahead of the clock, read with it set to now. */
  readonly silencesClamped: Counter;
  // the daemon itself
  /** Samples that found the event loop stalled (lag above alerts.monitorStalled.thresholdMs). */
  readonly loopStalls: Counter;
  /** 1 while `monitor_stalled` fires (verdicts held), else 0. */
  readonly loopStalled: Gauge;
  readonly buildInfo: Gauge<"version">;
  readonly ready: Gauge;
  /** Bind the scrape-time sources (alerts firing, journal size, readiness); until then those read 0. */
  bind(sources: MetricSources): void;
}

/**
 * Create every metric on `registry`; `collectProcess` adds prom-client's default process and Node.js
 * metrics under their usual unprefixed names (`process_*`, `nodejs_*`), so stock dashboards match.
 */
export function createMetrics(
  registry: Registry,
  options: { readonly collectProcess?: boolean } = {},
): Metrics {
  if (options.collectProcess ?? true) {
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    for (const name of LINT_FAILING_DEFAULTS) registry.removeSingleMetric(name);
  }
  const registers = [registry];
  let sources: MetricSources | undefined;
  const current = (): MetricSources | undefined => sources;
  const metrics: Metrics = {
    registry,
    bind(next) {
      sources = next;
    },
    ...upstreamMetrics(registers),
    ...streamMetrics(registers),
    ...alertingMetrics(registers, current),
    ...wsMetrics(registers),
    ...sinkMetrics(registers),
    ...silenceMetrics(registers, current),
    ...daemonMetrics(registers, current),
    recordingLines: new Counter({
      name: "pragma_monitor_recording_lines_total",
      help: "Lines of the upstream recording, by outcome: written, dropped (buffer full) or error (a file write failed).",
      labelNames: ["outcome"],
      registers,
    }),
  };
  metrics.buildInfo.set({ version: VERSION }, 1);
  for (const rule of RULE_KINDS)
    for (const { status, reason } of TRANSITIONS) metrics.alertTransitions.inc({ rule, status, reason }, 0);
  return metrics;
}

/** The upstream client's and the pipeline's metrics. */
function upstreamMetrics(
  registers: Registry[],
): Pick<
  Metrics,
  "polls" | "pollFailures" | "upstreamLatency" | "upstreamRequests" | "upstreamSkippedItems" | "targets"
> {
  return {
    polls: new ChildCounter({
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
    upstreamLatency: new ChildHistogram({
      name: "pragma_monitor_upstream_request_duration_seconds",
      help: "Latency of each upstream HTTP attempt.",
      labelNames: ["endpoint"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    upstreamRequests: new ChildCounter({
      name: "pragma_monitor_upstream_requests_total",
      help: "Upstream HTTP attempts by endpoint and status (or error code).",
      labelNames: ["endpoint", "status"],
      registers,
    }),
    upstreamSkippedItems: new Counter({
      name: "pragma_monitor_upstream_skipped_items_total",
      help: "Upstream list items left out because they failed validation (a publisher, feed, component, candle or funding rate), by endpoint.",
      labelNames: ["endpoint"],
      registers,
    }),
    targets: new Gauge({
      name: "pragma_monitor_targets",
      help: "Monitored targets by kind.",
      labelNames: ["kind"],
      registers,
    }),
  };
}

/** The SSE price stream's metrics: connections, events, reconnections and fallbacks to polling. */
function streamMetrics(
  registers: Registry[],
): Pick<
  Metrics,
  "streamConnections" | "streamEvents" | "streamReconnects" | "streamFallbacks" | "streamTargets"
> {
  return {
    streamConnections: new Gauge({
      name: "pragma_monitor_stream_connections",
      help: "Open SSE price-stream connections, by stream interval.",
      labelNames: ["interval"],
      registers,
    }),
    streamEvents: new Counter({
      name: "pragma_monitor_stream_events_total",
      help: "SSE price-stream messages received, by interval and kind (prices|historical|keepalive).",
      labelNames: ["interval", "kind"],
      registers,
    }),
    streamReconnects: new Counter({
      name: "pragma_monitor_stream_reconnects_total",
      help: "SSE price-stream connections lost and reopened, by interval and error code.",
      labelNames: ["interval", "code"],
      registers,
    }),
    streamFallbacks: new Counter({
      name: "pragma_monitor_stream_fallbacks_total",
      help: "Streamed targets that fell back to polling (stream stale or down), by interval.",
      labelNames: ["interval"],
      registers,
    }),
    streamTargets: new Gauge({
      name: "pragma_monitor_stream_targets",
      help: "Streamed targets by where their prices come from now (stream|poll).",
      labelNames: ["mode"],
      registers,
    }),
  };
}

/** The alert engine's and the event bus's metrics; firing alerts and the journal are read at scrape time. */
function alertingMetrics(
  registers: Registry[],
  sources: () => MetricSources | undefined,
): Pick<
  Metrics,
  "targetLastSuccess" | "alertsFiring" | "alertTransitions" | "journalSize" | "droppedEvents"
> {
  return {
    targetLastSuccess: new ChildGauge({
      name: "pragma_monitor_target_last_success_timestamp_seconds",
      help: "Unix time of each target's latest successful poll (one series per configured target; absent until its first success).",
      labelNames: ["target"],
      registers,
    }),
    alertsFiring: new Gauge({
      name: "pragma_monitor_alerts_firing",
      help: "Alerts currently firing on the event bus (rule engine and sinks alike), by rule and severity.",
      labelNames: ["rule", "severity"],
      registers,
      collect() {
        // every known rule × severity is exported, 0 when none fires, so series never vanish
        for (const rule of RULE_KINDS) for (const severity of SEVERITIES) this.set({ rule, severity }, 0);
        for (const alert of sources()?.activeAlerts() ?? [])
          this.inc({ rule: alert.rule, severity: alert.severity });
      },
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
      collect() {
        this.set(sources()?.journalSize() ?? 0);
      },
    }),
    droppedEvents: new Counter({
      name: "pragma_monitor_dropped_events_total",
      help: "Events dropped because a bounded buffer was full, by component and reason.",
      labelNames: ["component", "reason"],
      registers,
    }),
  };
}

/** The WebSocket server's and the HTTP port's metrics. */
function wsMetrics(
  registers: Registry[],
): Pick<
  Metrics,
  | "wsClients"
  | "wsMessagesIn"
  | "wsMessagesOut"
  | "wsSlowConsumers"
  | "wsRejected"
  | "wsResumeRangesForgotten"
  | "httpRejected"
> {
  return {
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
    wsResumeRangesForgotten: new Counter({
      name: "pragma_monitor_ws_resume_ranges_forgotten_total",
      help: "Ranges of a WebSocket connection's sent-events record forgotten at its limit (a later since below them is refused).",
      registers,
    }),
    httpRejected: new Counter({
      name: "pragma_monitor_http_rejected_total",
      help: "HTTP requests and connections refused before routing, by reason (host, unauthorized, max_connections, pipelining).",
      labelNames: ["reason"],
      registers,
    }),
  };
}

/** What silences do: their count by state, and what they kept from the sinks. */
function silenceMetrics(
  registers: Registry[],
  sources: () => MetricSources | undefined,
): Pick<Metrics, "sinkSilenced" | "silences" | "silencesClamped"> {
  return {
    sinkSilenced: new Counter({
      name: "pragma_monitor_sink_silenced_total",
      help: "Alert transitions a silence or maintenance window kept from each chat-ops sink.",
      labelNames: ["sink"],
      registers,
    }),
    silences: new Gauge({
      name: "pragma_monitor_silences",
      help: "Silences and maintenance windows, by state (active, pending, expired and still listed).",
      labelNames: ["state"],
      registers,
      collect() {
        for (const state of ["active", "pending", "expired"] as const) this.set({ state }, 0);
        for (const state of sources()?.silenceStates?.() ?? []) this.inc({ state });
      },
    }),
    silencesClamped: new Counter({
      name: "pragma_monitor_silences_clamped_total",
      help: "Silences read from the silences file at start by a daemon running alone (not in cluster mode) whose updatedAt was more than 5 min ahead of the clock (edited by hand, or the clock stepped back): kept, with updatedAt set to now.",
      registers,
    }),
  };
}

/** The chat-ops sinks' metrics. */
function sinkMetrics(
  registers: Registry[],
): Pick<
  Metrics,
  | "sinkDeliveries"
  | "sinkOutboxSize"
  | "sinkDeadLetters"
  | "sinkGroupNotifications"
  | "sinkGroups"
  | "sinkDeliveryDuration"
> {
  return {
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
    sinkGroupNotifications: new Counter({
      name: "pragma_monitor_sink_group_notifications_total",
      help: "Group notifications each grouping chat-ops sink delivered (one per group flush, however many alerts it lists).",
      labelNames: ["sink"],
      registers,
    }),
    sinkGroups: new Gauge({
      name: "pragma_monitor_sink_groups",
      help: "Notification groups each grouping chat-ops sink holds (groups with firing alerts they announced).",
      labelNames: ["sink"],
      registers,
    }),
    sinkDeliveryDuration: new Histogram({
      name: "pragma_monitor_sink_delivery_duration_seconds",
      help: "Duration of each chat-ops delivery attempt (request sent to response or failure), by sink.",
      labelNames: ["sink"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
  };
}

/** The daemon's own metrics: stalls, build and readiness (read at scrape time). */
function daemonMetrics(
  registers: Registry[],
  sources: () => MetricSources | undefined,
): Pick<Metrics, "loopStalls" | "loopStalled" | "buildInfo" | "ready"> {
  return {
    loopStalls: new Counter({
      name: "pragma_monitor_loop_stalls_total",
      help: "Times the daemon's event loop was found stalled beyond alerts.monitorStalled.thresholdMs (each raises or extends monitor_stalled).",
      registers,
    }),
    loopStalled: new Gauge({
      name: "pragma_monitor_stalled",
      help: "1 while the daemon's own stall holds data-age and upstream verdicts (monitor_stalled firing), else 0.",
      registers,
    }),
    buildInfo: new Gauge({
      name: "pragma_monitor_build_info",
      help: "Always 1; the label carries the daemon's version (the Node.js version is in nodejs_version_info).",
      labelNames: ["version"],
      registers,
    }),
    ready: new Gauge({
      name: "pragma_monitor_ready",
      help: "1 when /readyz answers 200, 0 when it answers 503.",
      registers,
      collect() {
        this.set(sources()?.ready() === true ? 1 : 0);
      },
    }),
  };
}
