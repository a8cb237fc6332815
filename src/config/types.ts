// The validated, typed configuration the daemon runs on: scalar sections typed by the convict schema
// (schema.ts), array elements by their zod schemas (monitors.ts, sinks.ts, rules/).
import type { MaintenanceWindow } from "../domain/maintenance.js";
import type { RuleConfig } from "../domain/rules/index.js";
import type {
  FundingMonitorConfig,
  OffchainMonitorConfig,
  OnchainMonitorConfig,
  PublishersMonitorConfig,
  VaultMonitorConfig,
} from "./monitors.js";
import type { ConfigValues } from "./schema.js";
import type { SinkConfig } from "./sinks.js";

export type {
  FundingMonitorConfig,
  OffchainMonitorConfig,
  OnchainMonitorConfig,
  PublishersMonitorConfig,
  VaultMonitorConfig,
} from "./monitors.js";
export type {
  AlertSinkConfig,
  AlertSinkKind,
  HeartbeatSinkConfig,
  SinkCommonConfig,
  SinkConfig,
  SinkKind,
} from "./sinks.js";

export type UpstreamConfig = ConfigValues["upstream"];
export type RetryConfig = UpstreamConfig["retry"];
export type ServerConfig = ConfigValues["server"];
/** Settings that apply to every alert the daemon publishes. */
export type AlertsConfig = ConfigValues["alerts"];
export type StateConfig = ConfigValues["state"];
/** The `recording` block: what the daemon records of the upstream (docs/recording.md). */
export type RecordingConfig = ConfigValues["recording"];
/** The `cluster` block: NATS membership and target ownership (docs/cluster.md). */
export type ClusterConfig = ConfigValues["cluster"];
export type LogConfig = ConfigValues["log"];
export type ShutdownConfig = ConfigValues["shutdown"];

/** The `monitors` section: the targets (validated arrays) and how polls are paced. */
export type MonitorsConfig = Omit<
  ConfigValues["monitors"],
  "offchain" | "onchain" | "publishers" | "funding" | "vaults"
> & {
  readonly offchain: readonly OffchainMonitorConfig[];
  readonly onchain: readonly OnchainMonitorConfig[];
  readonly publishers: readonly PublishersMonitorConfig[];
  readonly funding: readonly FundingMonitorConfig[];
  readonly vaults: readonly VaultMonitorConfig[];
};

/** The whole validated configuration. */
export interface AppConfig {
  readonly upstream: UpstreamConfig;
  readonly monitors: MonitorsConfig;
  readonly rules: readonly RuleConfig[];
  readonly alerts: AlertsConfig;
  readonly server: ServerConfig;
  readonly sinks: readonly SinkConfig[];
  /** Maintenance windows: recurring silences (domain/maintenance.ts turns them into silences at a time). */
  readonly maintenance: readonly MaintenanceWindow[];
  readonly state: StateConfig;
  readonly recording: RecordingConfig;
  readonly cluster: ClusterConfig;
  readonly log: LogConfig;
  readonly shutdown: ShutdownConfig;
}
