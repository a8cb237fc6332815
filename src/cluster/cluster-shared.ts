// What the members share besides targets: silences, the config generation, the cause summaries, a status of the
// membership, and the cluster_error alert each member raises on its own bus.
import type { Logger } from "pino";
import type { AlertPayload } from "../domain/events.js";
import { activeAlerts } from "../domain/monitor.js";
import type { Silence } from "../domain/silence.js";
import type { EventHub } from "../pipeline/event-hub.js";
import type { MonitorRunner } from "../pipeline/monitor-runner.js";
import type { Silencer, SilencerOptions } from "../pipeline/silencer.js";
import { createCauseSummaries } from "./cause-summaries.js";
import { createClusterErrorAlert } from "./cluster-error-alert.js";
import { createConfigGeneration, type ConfigGenerationView } from "./config-generation.js";
import type { ClusterMember, ClusterStatus } from "./member.js";
import type { PublishedAlerts } from "./published-alerts.js";
import { createSilenceSync } from "./silence-sync.js";

/** How often the shared parts look at NATS (and the cluster_error alert at the member). */
const SHARED_INTERVAL_MS = 1_000;

/** What the shared parts need from cluster mode. */
export interface ClusterSharedDeps {
  readonly member: ClusterMember;
  readonly memberId: string;
  /** This process (its cause summary counts only while its lease is this incarnation's). */
  readonly incarnation: string;
  readonly logger: Logger;
  readonly nowMs: () => number;
  /** The hash of the config in force on this member. */
  readonly configHash: () => string;
  /** The runner, once the pipeline runs (its engine's firing alerts are this member's to re-announce). */
  readonly runner: () => MonitorRunner | undefined;
  /** The daemon alerts this process published. */
  readonly published: PublishedAlerts;
  /** Another member's cause record is left out for its configuration hash (once a streak). */
  readonly causeRecordExcluded: (reason: "config" | "no_hash") => void;
  /** A value read from the silences bucket was not a valid silence, and skipped. */
  readonly silenceInvalid: () => void;
}

/** One live member as /api/v1/status lists it. */
export interface MemberStatusView {
  readonly memberId: string;
  readonly self: boolean;
  readonly incarnation: string;
  readonly leaseExpiresAt: string;
  readonly leaseRevision: number;
  readonly targets: number;
  readonly keys: readonly string[];
  /** Its record says it stands by: no member for the rendezvous (the others take its keys). */
  readonly standby: boolean;
}

/** The `cluster` object of /api/v1/status. */
export interface ClusterStatusView {
  readonly memberId: string;
  readonly leaseRevision: number | null;
  readonly leaseExpiresAt: string | null;
  readonly error: string | null;
  readonly ownedKeys: number;
  readonly pendingKeys: number;
  /** This member stands by: its membership view is not current, it owns nothing. */
  readonly standby: boolean;
  readonly members: readonly MemberStatusView[];
  readonly config: ConfigGenerationView;
}

/** The shared parts of one member. */
export interface ClusterShared {
  /** The silencer's cluster options: what it re-announces, who announces a change by time, where a change goes. */
  readonly silencing: {
    remuteScope(): (alert: AlertPayload) => boolean;
    announceOnce(claim: string, announce: () => void): void;
    stored(silence: Silence): void;
  };
  /** Share `silencer`'s silences and the cause summaries, and raise cluster_error on `hub`, from now on. */
  start(silencer: Silencer, hub: EventHub): void;
  /** A config was loaded (reload): it becomes the cluster's generation. */
  configLoaded(): void;
  /** The cluster's generation (null until read from NATS). */
  configGeneration(): number | null;
  status(): ClusterStatusView;
  stop(): Promise<void>;
}

/** Create the shared parts; nothing runs until `start`. */
export function createClusterShared(deps: ClusterSharedDeps): ClusterShared {
  const { member, logger, nowMs } = deps;
  const buckets = (): ReturnType<ClusterMember["sharedBuckets"]> => member.sharedBuckets();
  let silencer: Silencer | undefined;
  const sync = createSilenceSync({
    buckets,
    silencer: () => silencer,
    logger,
    nowMs,
    invalid: deps.silenceInvalid,
  });
  const generation = createConfigGeneration({
    buckets,
    hash: deps.configHash,
    memberId: deps.memberId,
    nowMs,
    logger,
  });
  const causes = createCauseSummaries({
    bucket: () => buckets()?.causes,
    memberId: deps.memberId,
    incarnation: deps.incarnation,
    member,
    runner: deps.runner,
    logger,
    nowMs,
    excluded: deps.causeRecordExcluded,
  });
  let timer: NodeJS.Timeout | undefined;
  return {
    silencing: {
      remuteScope: () => remuteScope(deps),
      announceOnce: (claim, announce) => sync.announceOnce(claim, announce),
      stored: (silence) => sync.stored(silence),
    },
    start(next, hub) {
      silencer = next;
      sync.start(SHARED_INTERVAL_MS);
      generation.start(SHARED_INTERVAL_MS);
      causes.start(hub, SHARED_INTERVAL_MS);
      const alert = createClusterErrorAlert({
        memberId: deps.memberId,
        error: () => member.status().error,
        hub,
        nowMs,
      });
      timer = setInterval(() => alert.check(), SHARED_INTERVAL_MS).unref();
    },
    configLoaded: () => generation.loaded(),
    configGeneration: () => generation.view().generation,
    status: () => clusterStatusView(member.status(), generation.view()),
    async stop() {
      clearInterval(timer);
      sync.stop();
      generation.stop();
      await causes.stop();
    },
  };
}

/**
 * The firing alerts this member re-announces when their muting changes: those its engine holds (the targets it
 * owns) and the daemon alerts it published, not the ones every other member publishes into the shared log.
 */
function remuteScope(deps: ClusterSharedDeps): (alert: AlertPayload) => boolean {
  const runner = deps.runner();
  const engine = new Set(runner === undefined ? [] : activeAlerts(runner.state()).map((a) => a.fingerprint));
  return (alert) => engine.has(alert.fingerprint) || deps.published.has(alert.fingerprint);
}

/** The `cluster` object of /api/v1/status from the member's status and the shared config generation. */
export function clusterStatusView(status: ClusterStatus, config: ConfigGenerationView): ClusterStatusView {
  return {
    memberId: status.memberId,
    leaseRevision: status.leaseRevision,
    leaseExpiresAt: status.leaseExpiresAtMs === 0 ? null : new Date(status.leaseExpiresAtMs).toISOString(),
    error: status.error,
    ownedKeys: status.ownedKeys,
    pendingKeys: status.pendingKeys,
    standby: status.standby,
    members: status.members.map((view) => ({
      memberId: view.memberId,
      self: view.memberId === status.memberId,
      incarnation: view.incarnation,
      leaseExpiresAt: new Date(view.expiresAtMs).toISOString(),
      leaseRevision: view.revision,
      targets: view.targets,
      keys: view.keys,
      standby: view.standby,
    })),
    config,
  };
}

/** The silencer's options in cluster mode, bound late (the silencer exists before cluster mode starts). */
export function clusterSilencerOptions(
  shared: () => ClusterShared | undefined,
): Pick<SilencerOptions, "remuteScope" | "announceOnce" | "onStored" | "clampFutureUpdatedAt"> {
  return {
    // a far-future updatedAt in silences.json may be what the other members hold: lowered here, this member's next
    // change of that silence would be older than theirs, and ignored (seeding would also push the lowered version)
    clampFutureUpdatedAt: false,
    // before cluster mode runs this member speaks for no alert
    remuteScope: () => shared()?.silencing.remuteScope() ?? (() => false),
    announceOnce: (claim, announce) => {
      const parts = shared();
      if (parts === undefined) announce();
      else parts.silencing.announceOnce(claim, announce);
    },
    // one stored before cluster mode runs is written when the sync first connects (it writes every held silence)
    onStored: (silence) => shared()?.silencing.stored(silence),
  };
}
