// The cluster's Prometheus metrics, registered on the daemon's registry only when cluster mode is on.
import { Counter, Gauge, type Registry } from "prom-client";

/** What a member reports about its membership. */
export interface ClusterMetrics {
  /** 1 while the member cannot renew its lease or read the membership (NATS unreachable, lease lost), else 0. */
  readonly error: Gauge;
  readonly members: Gauge;
  readonly ownedTargets: Gauge;
  readonly leasesLost: Counter;
  /** Membership watches reopened because one of this member's renewals did not come back through them in time. */
  readonly watchReopened: Counter;
  /** Polls and alerts refused because the member held no valid lease (the fence). */
  readonly fenced: Counter<"what">;
  /** Handover records whose price history (or one target's part) was refused: reason malformed or oversized. */
  readonly historyRejected: Counter<"reason">;
  /** Targets whose price points were left out of a handover record this member wrote, to keep it within its budget. */
  readonly historyTrimmed: Counter;
  /** Members' cause records left out for their configuration hash (once a streak): reason config or no_hash. */
  readonly causeRecordsExcluded: Counter<"reason">;
  /** Values read from the silences bucket that are not valid silences (skipped). */
  readonly silencesInvalid: Counter;
}

/** Register the cluster metrics on `registry`. */
export function createClusterMetrics(registry: Registry): ClusterMetrics {
  const registers = [registry];
  return {
    error: new Gauge({
      name: "pragma_monitor_cluster_error",
      help: "1 while this member cannot renew its lease or read the membership from NATS, else 0.",
      registers,
    }),
    members: new Gauge({
      name: "pragma_monitor_cluster_members",
      help: "Live cluster members this member sees (itself included while its lease is valid).",
      registers,
    }),
    ownedTargets: new Gauge({
      name: "pragma_monitor_cluster_owned_targets",
      help: "Targets this member owns and polls.",
      registers,
    }),
    leasesLost: new Counter({
      name: "pragma_monitor_cluster_leases_lost_total",
      help: "Times this member's lease expired or was taken over before it could renew it.",
      registers,
    }),
    watchReopened: new Counter({
      name: "pragma_monitor_cluster_watch_reopened_total",
      help: "Membership watches this member reopened because NATS took one of its renewals and the watch had not delivered it within a renew interval plus half a tick (a watch whose consumer died with its NATS node).",
      registers,
    }),
    fenced: new Counter({
      name: "pragma_monitor_cluster_fenced_total",
      help: "Upstream requests (what=poll) and alerts (what=publish) refused because this member held no valid lease.",
      labelNames: ["what"],
      registers,
    }),
    historyRejected: new Counter({
      name: "pragma_monitor_cluster_history_rejected_total",
      help: "Price histories in alert handover records refused (reason=malformed|oversized): those targets' windows start at this member's polls.",
      labelNames: ["reason"],
      registers,
    }),
    historyTrimmed: new Counter({
      name: "pragma_monitor_cluster_history_trimmed_total",
      help: "Targets whose price points this member left out of an alert handover record it wrote (the largest first), to keep the record within 512 KiB (counted when a key's set of left-out targets changes).",
      registers,
    }),
    causeRecordsExcluded: new Counter({
      name: "pragma_monitor_cluster_cause_records_excluded_total",
      help: "Other members' cause summaries this member's cause rules left out because they were written under another cause configuration (reason=config: a rolling reload) or carry no configuration hash (reason=no_hash: an older version); counted once per member and streak.",
      labelNames: ["reason"],
      registers,
    }),
    silencesInvalid: new Counter({
      name: "pragma_monitor_cluster_silences_invalid_total",
      help: "Values this member's watch read from the NATS silences bucket that are not valid silences (skipped; this member keeps its own version, and its next write of that silence replaces the value).",
      registers,
    }),
  };
}
