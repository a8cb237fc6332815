// Cluster mode in the daemon: the member, and the fences that keep a member without a lease from polling or alerting.
import { hostname } from "node:os";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { ClusterConfig, MonitorsConfig } from "../config/types.js";
import type { Readiness } from "../domain/readiness.js";
import type { AlertPayload } from "../domain/events.js";
import type { TargetSpec } from "../domain/types.js";
import type { EventHub } from "../pipeline/event-hub.js";
import type { MonitorRunner } from "../pipeline/monitor-runner.js";
import { planTargets } from "../pipeline/targets.js";
import { CAUSE_OWNERSHIP_KEY, keyOfLabelsFor, type KeyOfLabels } from "../domain/alert-handover.js";
import { isCauseKind, type RuleConfig } from "../domain/rules/index.js";
import type { PragmaClient } from "../upstream/types.js";
import { createAlertHandover, type AlertHandover } from "./alert-handover.js";
import { fencedClient, fencedHub } from "./fences.js";
import { childLogger } from "../logger.js";
import { openLeaseStore } from "./lease-store.js";
import { createClusterMember, type ClusterMember } from "./member.js";
import { createClusterMetrics, type ClusterMetrics } from "./metrics.js";
import { createClusterShared, type ClusterShared, type ClusterSharedDeps } from "./cluster-shared.js";
import { indexTargetKeys, type TargetKeys } from "./target-keys.js";
import type { PublishedAlerts } from "./published-alerts.js";

/** What cluster mode needs from the daemon. */
export interface ClusterModeDeps {
  readonly config: ClusterConfig;
  /** The monitors of the configuration in force (changes on reload). */
  readonly monitors: () => MonitorsConfig;
  /** The rules of the configuration in force (an enabled cause rule adds the cause key). */
  readonly rules: () => readonly RuleConfig[];
  readonly logger: Logger;
  readonly registry: Registry;
  readonly nowMs: () => number;
  readonly random: () => number;
  /** The journal's last seq (recorded in each alert checkpoint). */
  readonly lastSeq: () => number;
  /** The alert transitions the journal holds after a seq (a new owner brings a lagging checkpoint up to them). */
  readonly journaledAfter: (seq: number) => readonly AlertPayload[];
  /** Whether this member's events still wait for the cluster's log (checkpoints wait for them). */
  readonly unpublished: () => boolean;
  /** Whether this member read the cluster's log up to its end now (a new owner reconciles only then). */
  readonly readThrough: () => Promise<boolean>;
  /** The hash of the configuration in force (the shared config generation). */
  readonly configHash: () => string;
  /** The daemon alerts this process published (it re-announces only those when a silence changes). */
  readonly published: PublishedAlerts;
}

/** A daemon's membership, and the fenced views of its upstream client and event hub. */
export interface ClusterMode {
  readonly member: ClusterMember;
  /** Silences, the config generation, the status of the membership and the cluster_error alert. */
  readonly shared: ClusterShared;
  /** The client the pipeline polls with: refuses every request while the lease is not valid. */
  fenceClient(client: PragmaClient): PragmaClient;
  /** The hub the pipeline publishes to: drops alerts while the lease is not valid (the new owner speaks for them), checkpoints the others. */
  fenceHub(hub: EventHub): EventHub;
  /** Restrict the runner to the owned targets whose alert state was adopted (none until the first lease) and start the membership. */
  attach(runner: MonitorRunner): void;
  /** `/readyz` with the cluster's reasons added. */
  readiness(base: Readiness): Readiness;
  stop(): Promise<void>;
}

/** This process's incarnation: 8 hex digits from `random` (tells a restarted member from its previous run). */
function newIncarnation(random: () => number): string {
  return Math.floor(random() * 2 ** 32)
    .toString(16)
    .padStart(8, "0");
}

/** What the shared parts count: cause records left out, invalid silences read from NATS. */
function sharedCounters(
  metrics: ClusterMetrics,
): Pick<ClusterSharedDeps, "causeRecordExcluded" | "silenceInvalid"> {
  return {
    causeRecordExcluded: (reason) => metrics.causeRecordsExcluded.inc({ reason }),
    silenceInvalid: () => metrics.silencesInvalid.inc(),
  };
}

/** Cluster mode when `cluster.nats.servers` is set, else undefined (one daemon, as always). */
export function createClusterMode(deps: ClusterModeDeps): ClusterMode | undefined {
  const { config } = deps;
  if (config.nats.servers.length === 0) return undefined;
  const incarnation = newIncarnation(deps.random);
  const memberId = config.memberId === "" ? defaultMemberId(incarnation) : config.memberId;
  const metrics = createClusterMetrics(deps.registry);
  const logger = childLogger(deps.logger, { memberId });
  let runner: MonitorRunner | undefined;
  let handover: AlertHandover | undefined;
  const owns = (spec: TargetSpec): boolean => handover?.owns(ownershipKey(spec)) ?? false;
  const ownsCauses = (): boolean => handover?.owns(CAUSE_OWNERSHIP_KEY) ?? false;
  const plan = planOnce(deps.monitors, deps.rules);
  const member = createClusterMember({
    config,
    memberId,
    incarnation,
    nowMs: deps.nowMs,
    logger,
    metrics,
    keys: () => plan().keys,
    targetCount: (keys) => plan().keyOfEach.filter((key) => keys.has(key)).length,
    onOwnership: () => handover?.request(),
    openStore: () =>
      openLeaseStore(config.nats, { name: memberId, timeoutMs: Math.min(2_000, config.leaseMs / 4) }),
  });
  const alerts = (handover = createAlertHandover({
    member,
    memberId,
    targetKeys: () => plan().targetKeys,
    keyOfLabels: () => plan().keyOfLabels,
    lastSeq: deps.lastSeq,
    journaledAfter: deps.journaledAfter,
    unpublished: deps.unpublished,
    readThrough: deps.readThrough,
    readThroughPatienceMs: config.leaseMs,
    nowMs: deps.nowMs,
    logger,
    restrict: () => runner?.restrict(owns, ownsCauses()),
    historyRejected: (reason) => metrics.historyRejected.inc({ reason }),
    historyCheckpointMs: config.historyCheckpointMs,
    leaseMs: config.leaseMs,
    historyTrimmed: (targets) => metrics.historyTrimmed.inc(targets),
  }));
  const shared = createClusterShared({
    ...deps,
    member,
    memberId,
    incarnation,
    logger,
    runner: () => runner,
    ...sharedCounters(metrics),
  });
  logger.warn(
    { servers: config.nats.servers.length, leaseMs: config.leaseMs },
    "cluster mode (experimental): targets, alert state, the event log, notifications and silences are shared; maintenance windows and the daemon's own alerts are per member, and a price move across a member's kill -9 is missed by a window shorter than the gap (docs/cluster.md)",
  );
  return {
    member,
    shared,
    fenceClient: (client) => fencedClient(client, () => fenceOpen(member, metrics, "poll")),
    fenceHub: (hub) =>
      fencedHub(
        hub,
        () => fenceOpen(member, metrics, "publish"),
        () => alerts.request(),
      ),
    attach(next) {
      runner = next;
      next.restrict(owns, ownsCauses());
      alerts.attach(next);
      member.start();
    },
    readiness: (base) => withClusterReasons(base, member),
    async stop() {
      await shared.stop();
      await alerts.stop();
      await member.stop();
    },
  };
}

/**
 * What ownership is decided on: the pair, so an on-chain target and the off-chain price it is compared
 * with (`onchain_offchain_deviation`) stay on one member; targets without a pair on their own.
 */
export function ownershipKey(spec: TargetSpec): string {
  return "pair" in spec ? `pair:${spec.pair}` : spec.id;
}

/** The ownership keys of a configuration: each distinct key (and the cause key), each target's key, and both indexes. */
interface PlannedKeys {
  readonly keys: readonly string[];
  /** Each configured target's key, in configuration order. */
  readonly keyOfEach: readonly string[];
  /** The key by target id, and the targets by key. */
  readonly targetKeys: TargetKeys;
  /** The key of an alert restored from the log (no target ids yet), by the labels of the targets it names. */
  readonly keyOfLabels: KeyOfLabels;
}

/**
 * The ownership keys of the monitors in force, and the cause key while a cause rule is enabled, planned again only
 * when either changes (a reload), not on every look.
 */
function planOnce(monitors: () => MonitorsConfig, rules: () => readonly RuleConfig[]): () => PlannedKeys {
  let planned:
    { readonly of: MonitorsConfig; readonly causes: boolean; readonly keys: PlannedKeys } | undefined;
  return () => {
    const now = monitors();
    const causes = rules().some((rule) => rule.enabled && isCauseKind(rule.kind));
    if (planned?.of !== now || planned.causes !== causes) {
      const specs = planTargets(now).map((target) => target.spec);
      const keyOfEach = specs.map(ownershipKey);
      const targetKeys = indexTargetKeys(specs.map((spec, i) => [spec.id, keyOfEach[i]!] as const));
      const keyOfLabels = keyOfLabelsFor(specs.map((spec, i) => ({ spec, key: keyOfEach[i]! })));
      // the cause rules' key is owned like a target's: one member evaluates them and publishes their alerts
      const keys = [...new Set(keyOfEach), ...(causes ? [CAUSE_OWNERSHIP_KEY] : [])];
      planned = { of: now, causes, keys: { keys, keyOfEach, targetKeys, keyOfLabels } };
    }
    return planned.keys;
  };
}

/** `<hostname>-<incarnation>`, reduced to the characters a KV key allows. */
function defaultMemberId(incarnation: string): string {
  return `${hostname()}-${incarnation}`.replace(/[^A-Za-z0-9_-]/g, "_");
}

function fenceOpen(member: ClusterMember, metrics: ClusterMetrics, what: "poll" | "publish"): boolean {
  if (member.leaseValid()) return true;
  metrics.fenced.inc({ what });
  return false;
}

/** Not ready while the member holds no lease, stands by, or cannot reach NATS. */
export function withClusterReasons(
  base: Readiness,
  member: Pick<ClusterMember, "status" | "leaseValid">,
): Readiness {
  const status = member.status();
  const leaseValid = member.leaseValid();
  // a member that stood down says so in its error already; one starting up has no error yet
  const standingBy = leaseValid && status.standby && status.error === null;
  const reasons = [
    ...(leaseValid ? [] : ["cluster: no valid lease (polling nothing)"]),
    ...(standingBy ? ["cluster: standing by until its membership view is current (polling nothing)"] : []),
    ...(status.error === null ? [] : [`cluster: ${status.error}`]),
  ];
  if (reasons.length === 0) return base;
  return { ready: false, reasons: [...base.reasons, ...reasons] };
}
