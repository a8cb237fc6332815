// The convict schema, one source of truth for every key: doc, format, default, env (PM_*), sensitivity.
import convict from "convict";
import { registerFormats } from "./formats.js";
import { arrayKey, intKey, key, type SchemaSection, type ValuesOf } from "./schema-node.js";
import { clusterSchema } from "./schema-cluster.js";
import { monitorsSchema } from "./schema-monitors.js";
import { upstreamSchema } from "./schema-upstream.js";

/** Log levels pino accepts. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace"] as const;

type LogLevel = (typeof LOG_LEVELS)[number];

/** The whole schema. */
export const configSchema = {
  upstream: upstreamSchema,
  monitors: monitorsSchema,
  rules: arrayKey("Alert rules: [{kind, id, threshold, …}] (see Rule elements below).", "PM_RULES"),
  alerts: {
    externalLabels: key<Readonly<Record<string, string>>>({
      doc: 'Static labels added to every alert (WebSocket, journal, log, every sink), e.g. {"env":"prod","region":"eu"}, so daemons sharing one Alertmanager are told apart. Prometheus label names; not one the daemon sets itself; an alert\'s own label wins. Not part of the fingerprint.',
      format: "pm-label-set",
      default: {},
      env: "PM_ALERTS_EXTERNAL_LABELS",
    }),
    watchdog: {
      enabled: key({
        doc: "Publish an always-firing `watchdog` alert (Alertmanager's Watchdog) while the daemon itself works (listening, pipeline running, every target polled once; a failing upstream or sink does not stop it); it reaches alertmanager sinks, and other sinks only when their `rules` name `watchdog`.",
        format: "pm-boolean",
        default: false,
        env: "PM_ALERTS_WATCHDOG_ENABLED",
      }),
    },
    monitorStalled: {
      thresholdMs: intKey(
        "Event-loop lag that counts as the daemon's own stall (ms): it raises `monitor_stalled` (warning, every sink) and holds stale_price, publisher_stale, upstream_error and other time-driven verdicts until the loop has run on time for the whole-poll deadline.",
        "PM_ALERTS_MONITOR_STALLED_THRESHOLD_MS",
        2_000,
        100,
        600_000,
      ),
    },
  },
  server: {
    host: key({
      doc: "Interface the WebSocket/HTTP server binds (keep 127.0.0.1 unless a token is set).",
      format: "pm-nonempty-string",
      default: "127.0.0.1",
      env: "PM_SERVER_HOST",
    }),
    port: intKey(
      "Port of /ws, /healthz, /readyz, /metrics (0 = any free port).",
      "PM_SERVER_PORT",
      8787,
      0,
      65_535,
    ),
    externalUrl: key({
      doc: 'URL under which users reach this daemon, for links in alerts (Alertmanager generatorURL); "" = http://<host>:<port> of the listening socket.',
      format: "pm-optional-url",
      default: "",
      env: "PM_SERVER_EXTERNAL_URL",
    }),
    token: key({
      doc: 'Bearer token required at WebSocket upgrade ("" = none; secret).',
      format: "*",
      default: "",
      env: "PM_SERVER_TOKEN",
      sensitive: true,
    }),
    allowedHosts: key<readonly string[]>({
      doc: 'Host header names accepted besides localhost, 127.0.0.1 and [::1] (any port; ".example.com" includes subdomains, "*" any). Checked on every request when bound to loopback, or when this list is set (DNS rebinding).',
      format: "pm-string-list",
      default: [],
      env: "PM_SERVER_ALLOWED_HOSTS",
    }),
    allowedOrigins: key<readonly string[]>({
      doc: 'Browser origins allowed to open the WebSocket besides the daemon\'s own (e.g. "https://dash.example.com"; "*" any). Clients sending no Origin (non-browser) are always allowed.',
      format: "pm-origin-list",
      default: [],
      env: "PM_SERVER_ALLOWED_ORIGINS",
    }),
    metricsToken: key({
      doc: 'Bearer token required on GET /metrics ("" = /metrics open; secret). Probes /healthz and /readyz stay open.',
      format: "*",
      default: "",
      env: "PM_SERVER_METRICS_TOKEN",
      sensitive: true,
    }),
    heartbeatMs: intKey(
      "Ping and heartbeat-frame interval; a peer that misses a pong is terminated (ms).",
      "PM_SERVER_HEARTBEAT_MS",
      30_000,
      1_000,
      600_000,
    ),
    maxClients: intKey("Maximum concurrent WebSocket clients.", "PM_SERVER_MAX_CLIENTS", 2_000, 1, 100_000),
    maxConnections: intKey(
      "Maximum concurrent TCP connections on the port (HTTP requests and WebSocket clients together); more are closed at once, counted and logged. Keep it above maxClients and well below the file-descriptor limit (ulimit -n).",
      "PM_SERVER_MAX_CONNECTIONS",
      4_096,
      16,
      1_000_000,
    ),
    maxMessageBytes: intKey(
      "Largest client message (bytes).",
      "PM_SERVER_MAX_MESSAGE_BYTES",
      65_536,
      256,
      16_777_216,
    ),
    messagesPerSecond: intKey(
      "Client messages per second before rate_limited.",
      "PM_SERVER_MESSAGES_PER_SECOND",
      64,
      1,
      10_000,
    ),
    maxBufferedBytes: intKey(
      "Send buffer per client; a slower consumer is closed with 1013 (bytes).",
      "PM_SERVER_MAX_BUFFERED_BYTES",
      1_048_576,
      65_536,
      1_073_741_824,
    ),
    journalSize: intKey(
      "Events kept in memory for `since` replay.",
      "PM_SERVER_JOURNAL_SIZE",
      10_000,
      100,
      10_000_000,
    ),
  },
  sinks: arrayKey("Chat-ops sinks: [{kind, url, …}] (see Sink elements below).", "PM_SINKS"),
  grouping: {
    groupBy: key<readonly string[]>({
      doc: "Default `groupBy` of every sink (a sink's own key wins): alerts with the same values of these labels (`rule` and `severity` count as labels) are notified together, as Alertmanager's group_by does; [] = one group for everything a sink receives; [\"...\"] = grouping off (every transition notified on its own, at once). The alertmanager sink never groups (Alertmanager does).",
      format: "pm-group-by",
      default: [],
      env: "PM_GROUPING_GROUP_BY",
    }),
    groupWaitMs: intKey(
      "Default `groupWaitMs`: a new group waits this long for more alerts before its first notification (ms). Longer gathers more of one incident into its first message; shorter pages sooner.",
      "PM_GROUPING_GROUP_WAIT_MS",
      5_000,
      0,
      3_600_000,
    ),
    groupIntervalMs: intKey(
      "Default `groupIntervalMs`: a group that notified waits this long before it notifies what changed since, new alerts and resolves alike (ms). Longer means fewer messages per incident; a new alert joining a notified group waits up to this long.",
      "PM_GROUPING_GROUP_INTERVAL_MS",
      60_000,
      0,
      86_400_000,
    ),
    repeatIntervalMs: intKey(
      "Default `repeatIntervalMs`: a group with firing alerts and nothing new is notified again after this long (ms); 0 = never.",
      "PM_GROUPING_REPEAT_INTERVAL_MS",
      14_400_000,
      0,
      604_800_000,
    ),
  },
  maintenance: arrayKey(
    "Maintenance windows, recurring silences: [{name, matchers, comment, weekly | cron + durationMs, timeZone}] (see Maintenance windows below).",
    "PM_MAINTENANCE",
  ),
  state: {
    dir: key({
      doc: "Directory for alert state, journal and outboxes (relative to the working directory). $STATE_DIRECTORY (systemd) is used when this is not set explicitly.",
      format: "pm-nonempty-string",
      default: "./var",
      env: "PM_STATE_DIR",
    }),
  },
  recording: {
    enabled: key({
      doc: "Record every upstream response (target, times, HTTP status, raw body; price-stream events) for `pragma-monitor backtest` (docs/recording.md). Never holds headers, the API key or URL credentials.",
      format: "pm-boolean",
      default: false,
      env: "PM_RECORDING_ENABLED",
    }),
    dir: key({
      doc: "Directory of the recording's gzip-compressed JSONL files (relative to the working directory; created if missing).",
      format: "pm-nonempty-string",
      default: "./var/recording",
      env: "PM_RECORDING_DIR",
    }),
    maxFileBytes: intKey(
      "A recording file is closed and the next one started after this many uncompressed bytes.",
      "PM_RECORDING_MAX_FILE_BYTES",
      64 * 1024 * 1024,
      1_024,
      4 * 1024 * 1024 * 1024,
    ),
    maxFiles: intKey(
      "Oldest recording files are deleted beyond this many (0 = keep all).",
      "PM_RECORDING_MAX_FILES",
      0,
      0,
      100_000,
    ),
    maxBufferedBytes: intKey(
      'Bound of the lines waiting to be compressed; past it new lines are dropped, logged and counted in `pragma_monitor_recording_lines_total{outcome="dropped"}`.',
      "PM_RECORDING_MAX_BUFFERED_BYTES",
      16 * 1024 * 1024,
      64 * 1024,
      1024 * 1024 * 1024,
    ),
  },
  cluster: clusterSchema,
  log: {
    level: key<LogLevel>({
      doc: "Log level.",
      format: [...LOG_LEVELS],
      default: "info",
      env: "PM_LOG_LEVEL",
    }),
    pretty: key({
      doc: "Human-readable logs (pino-pretty) instead of JSON lines.",
      format: "pm-boolean",
      default: false,
      env: "PM_LOG_PRETTY",
    }),
  },
  shutdown: {
    drainTimeoutMs: intKey(
      "Deadline to drain sinks and close clients on SIGTERM (ms).",
      "PM_SHUTDOWN_DRAIN_TIMEOUT_MS",
      10_000,
      0,
      300_000,
    ),
  },
} as const satisfies SchemaSection;

/** Every key's value as convict holds it after validation; arrays are still raw JSON (read by zod in load.ts). */
export type ConfigValues = ValuesOf<typeof configSchema>;

/** A fresh convict instance over the schema, reading env from `env` (never process.argv). */
export function createConvict(
  env: Readonly<Record<string, string | undefined>>,
): convict.Config<ConfigValues> {
  registerFormats();
  return convict<ConfigValues>(configSchema, { env: { ...env }, args: [] });
}
