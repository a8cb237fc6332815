// The event contract of DESIGN §3: alert, lifecycle and price events that every sink renders.

import { RULE_CONFIG_KINDS, type RuleConfigKind } from "./rules/index.js";

export const SEVERITIES = ["info", "warning", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Numeric rank of a severity, for `minSeverity` filters. */
export function severityRank(severity: Severity): number {
  return SEVERITIES.indexOf(severity);
}

/** Kinds the daemon raises itself (sinks, watchdog, loop stall, a cluster member without NATS), not configurable rules. */
export const DAEMON_RULE_KINDS = ["sink_error", "watchdog", "monitor_stalled", "cluster_error"] as const;

/** Every alert's `rule`: the configurable kinds (the rule registry) and the daemon's own. */
export const RULE_KINDS: readonly RuleKind[] = [...RULE_CONFIG_KINDS, ...DAEMON_RULE_KINDS];
export type RuleKind = RuleConfigKind | (typeof DAEMON_RULE_KINDS)[number];

/** Label names used on alerts (DESIGN §3). */
export type AlertLabels = Readonly<Record<string, string>>;

export type AlertStatus = "firing" | "resolved";
export type AlertReason = "first" | "repeat" | "resolved";

/** Context values: prices as decimal strings, ages in ms, ISO times. */
export type AlertContext = Readonly<Record<string, string | number | boolean | null>>;

/** One alert transition as every sink sees it. */
export interface AlertPayload {
  readonly fingerprint: string;
  readonly status: AlertStatus;
  readonly rule: RuleKind;
  readonly severity: Severity;
  readonly labels: AlertLabels;
  readonly summary: string;
  readonly value: number | null;
  readonly threshold: number | null;
  readonly startsAt: string;
  readonly endsAt: string | null;
  readonly reason: AlertReason;
  readonly context: AlertContext;
  /**
   * Ids of the silences (and active maintenance windows, `maintenance:<name>`) that keep this transition from
   * chat-ops sinks; absent when none. On a resolve: present when the alert's firing was never notified.
   */
  readonly silencedBy?: readonly string[];
  /**
   * Fingerprint of the firing cause alert (upstream_down, publisher_outage, source_deviation, market_move) this
   * alert is a child of: the transition is not notified on its own. On a resolve: present when the alert's firing
   * was never notified because of its parent (as `silencedBy`); absent when the alert has no firing parent.
   */
  readonly causedBy?: string;
}

/** Whether chat-ops sinks leave this transition out: a silence mutes it, or it is a child of a firing cause alert. */
export function isMutedTransition(alert: Pick<AlertPayload, "silencedBy" | "causedBy">): boolean {
  return (alert.silencedBy?.length ?? 0) > 0 || alert.causedBy !== undefined;
}

/**
 * Whether a rule filter (rule kinds and configured rule ids, as sink and WebSocket filters take them) names
 * the rule that raised `alert`: its kind, or its id (label `rule_id`, present when the id differs from the kind).
 */
export function ruleFilterMatches(
  names: { has(name: string): boolean },
  alert: Pick<AlertPayload, "rule" | "labels">,
): boolean {
  const id = alert.labels["rule_id"];
  return names.has(alert.rule) || (id !== undefined && names.has(id));
}

export interface AlertEvent {
  readonly type: "alert";
  readonly seq: number;
  readonly alert: AlertPayload;
}

/** Lifecycle events: the daemon's own phases and the silences' (created, expired early or by time). */
export const LIFECYCLE_PHASES = [
  "started",
  "config_reloaded",
  "stopping",
  "silence_created",
  "silence_expired",
] as const;
export type LifecyclePhase = (typeof LIFECYCLE_PHASES)[number];

export interface LifecycleEvent {
  readonly type: "lifecycle";
  readonly seq: number;
  readonly event: LifecyclePhase;
  readonly at: string;
  readonly version: string;
  readonly detail?: Readonly<Record<string, string | number | boolean>>;
}

/** A live price observation pushed to `prices` subscribers (not journaled). */
export interface PriceTick {
  readonly pair: string;
  readonly market: "offchain" | "onchain";
  readonly target: string;
  readonly price: string;
  readonly numSources: number;
  readonly timestamp: string;
  readonly observedAt: string;
  readonly entryType?: string;
  readonly network?: string;
}

export interface PriceEvent {
  readonly type: "price";
  readonly tick: PriceTick;
}

/** Events with a `seq`, kept in the journal and replayable. */
export type JournaledEvent = AlertEvent | LifecycleEvent;
/** Everything on the daemon's event bus. */
export type BusEvent = JournaledEvent | PriceEvent;
