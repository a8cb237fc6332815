// The validated, typed configuration the daemon runs on (produced by the convict schema in schema.ts).
import type { Severity } from "../domain/events.js";
import type { RuleConfig } from "../domain/rules/index.js";
import type { Aggregation, EntryType, Interval, Network, PublisherType } from "../domain/types.js";
import type { CandleInterval } from "../upstream/server-rules.js";

export interface RetryConfig {
  /** Total attempts including the first (1 = no retry). */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Give up retrying once this much time has passed since the first attempt. */
  readonly maxElapsedMs: number;
}

export interface SimulatorConfig {
  readonly seed: number;
  /** Path of a scenario JSON file ("" = none; "demo" = the built-in demo scenario). */
  readonly scenario: string;
  /** Simulated seconds per real second. */
  readonly speed: number;
  /** API keys the simulator requires on pair price and candlesticks (empty = no auth). */
  readonly apiKeys: readonly string[];
}

export interface UpstreamConfig {
  /** "simulator" (start the embedded simulator) or the API base URL, e.g. http://127.0.0.1:3000. */
  readonly url: string;
  /** Base URL of the vault API ("" = same as url; with the simulator, its vault base path). */
  readonly vaultUrl: string;
  readonly apiKey: string;
  readonly timeoutMs: number;
  readonly connections: number;
  readonly retry: RetryConfig;
  readonly simulator: SimulatorConfig;
}

export interface OffchainMonitorConfig {
  readonly pair: string;
  readonly entryType: EntryType;
  readonly aggregation: Aggregation;
  readonly interval: Interval;
  readonly expiry: string | null;
  readonly periodMs: number;
}

export interface OnchainMonitorConfig {
  readonly pair: string;
  readonly network: Network;
  readonly aggregation: Aggregation;
  readonly periodMs: number;
}

export interface PublishersMonitorConfig {
  readonly network: Network;
  readonly publisherType: PublisherType;
  readonly periodMs: number;
}

export interface FundingMonitorConfig {
  readonly pair: string;
  readonly source: string;
  readonly periodMs: number;
}

export interface VaultMonitorConfig {
  readonly id: string;
  readonly periodMs: number;
}

export interface MonitorsConfig {
  readonly offchain: readonly OffchainMonitorConfig[];
  readonly onchain: readonly OnchainMonitorConfig[];
  readonly publishers: readonly PublishersMonitorConfig[];
  readonly funding: readonly FundingMonitorConfig[];
  readonly vaults: readonly VaultMonitorConfig[];
  /** Fraction of the period added as random jitter to each poll's start (0 = exactly one period apart). */
  readonly jitter: number;
  /** Each target's poll phase is drawn once, uniformly within min(spreadMs, period) of start. */
  readonly spreadMs: number;
  /** Poll starts are aligned to a grid of this many ms so polls due close together share one wake-up (0 = off). */
  readonly coalesceMs: number;
  /** Longest backoff between polls of a failing target. */
  readonly maxBackoffMs: number;
  /** Warm price history from candlesticks at start. */
  readonly warmup: {
    readonly enabled: boolean;
    readonly interval: CandleInterval;
    readonly lookbackMs: number;
  };
}

export interface ServerConfig {
  readonly host: string;
  readonly port: number;
  /** Base URL users reach the daemon at, for links in alerts ("" = derived from the listening socket). */
  readonly externalUrl: string;
  /** Bearer token required at WebSocket upgrade ("" = none). */
  readonly token: string;
  /** Host names accepted besides the loopback ones (see src/http/access.ts). */
  readonly allowedHosts: readonly string[];
  /** Browser origins allowed to open the WebSocket besides the daemon's own. */
  readonly allowedOrigins: readonly string[];
  /** Bearer token required on /metrics ("" = open). */
  readonly metricsToken: string;
  readonly heartbeatMs: number;
  readonly maxClients: number;
  /** Concurrent TCP connections on the port (HTTP and WebSocket); more are closed at once. */
  readonly maxConnections: number;
  readonly maxMessageBytes: number;
  readonly messagesPerSecond: number;
  readonly maxBufferedBytes: number;
  /** Events kept in the in-memory journal for `since` replay. */
  readonly journalSize: number;
}

/** Settings every chat-ops sink shares: routing filters, rate limit and delivery policy. */
export interface SinkCommonConfig {
  readonly name: string;
  readonly enabled: boolean;
  readonly rules: readonly string[];
  readonly pairs: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly minSeverity: Severity;
  readonly sendResolved: boolean;
  /** Token bucket: sustained messages per minute and burst size. */
  readonly ratePerMinute: number;
  readonly burst: number;
  readonly timeoutMs: number;
  /** Undelivered messages older than this go to the dead-letter file. */
  readonly maxAgeMs: number;
  /** Consecutive failed deliveries that raise a `sink_error` alert. */
  readonly failureThreshold: number;
}

/**
 * A dead-man's switch: pings `url` every `intervalMs` while the daemon itself works (healthchecks.io,
 * Cronitor, PagerDuty heartbeats, Uptime Kuma push monitors); alerts are never sent to it.
 */
export interface HeartbeatSinkConfig {
  readonly kind: "heartbeat";
  readonly name: string;
  readonly enabled: boolean;
  readonly url: string;
  readonly method: "GET" | "HEAD" | "POST";
  readonly intervalMs: number;
  /** Pinged instead of `url` while the daemon is not ready ("" = send nothing then). */
  readonly failUrl: string;
  readonly timeoutMs: number;
  /** Consecutive failed pings that raise a `sink_error` alert. */
  readonly failureThreshold: number;
}

/** A sink that delivers alerts (everything but the heartbeat). */
export type AlertSinkConfig =
  | (SinkCommonConfig & { readonly kind: "slack"; readonly url: string })
  | (SinkCommonConfig & { readonly kind: "discord"; readonly url: string })
  | (SinkCommonConfig & {
      readonly kind: "telegram";
      readonly url: string;
      readonly botToken: string;
      readonly chatId: string;
    })
  | (SinkCommonConfig & { readonly kind: "pagerduty"; readonly url: string; readonly routingKey: string })
  | (SinkCommonConfig & {
      readonly kind: "alertmanager";
      readonly url: string;
      readonly resendIntervalMs: number;
    })
  | (SinkCommonConfig & { readonly kind: "webhook"; readonly url: string; readonly secret: string });

/** One element of `sinks`. */
export type SinkConfig = AlertSinkConfig | HeartbeatSinkConfig;

export type SinkKind = SinkConfig["kind"];
export type AlertSinkKind = AlertSinkConfig["kind"];

/** Settings that apply to every alert the daemon publishes. */
export interface AlertsConfig {
  /** Static labels added to every alert; an alert's own label wins; not part of the fingerprint. */
  readonly externalLabels: Readonly<Record<string, string>>;
  /** The always-firing `watchdog` alert (a dead-man's switch for Alertmanager users). */
  readonly watchdog: { readonly enabled: boolean };
  /** The daemon's own stall: event-loop lag that raises `monitor_stalled` and holds data-age verdicts. */
  readonly monitorStalled: { readonly thresholdMs: number };
}

export interface StateConfig {
  readonly dir: string;
}

export interface LogConfig {
  readonly level: "fatal" | "error" | "warn" | "info" | "debug" | "trace";
  readonly pretty: boolean;
}

export interface ShutdownConfig {
  /** Deadline for draining sinks and closing clients on SIGTERM. */
  readonly drainTimeoutMs: number;
}

/** The whole validated configuration. */
export interface AppConfig {
  readonly upstream: UpstreamConfig;
  readonly monitors: MonitorsConfig;
  readonly rules: readonly RuleConfig[];
  readonly alerts: AlertsConfig;
  readonly server: ServerConfig;
  readonly sinks: readonly SinkConfig[];
  readonly state: StateConfig;
  readonly log: LogConfig;
  readonly shutdown: ShutdownConfig;
}
