// One cluster member: renews its lease in NATS KV, reads who else is live, and owns its rendezvous share of the targets.
import type { Logger } from "pino";
import type { ClusterConfig } from "../config/types.js";
import { NO_OWNERSHIP, nextOwnership, type Ownership } from "../domain/rendezvous.js";
import type { AlertBucket } from "./alert-bucket.js";
import type { ClusterMetrics } from "./metrics.js";
import type { SharedBuckets } from "./shared-buckets.js";
import type { LeaseRecord, LeaseStore, StoredLease } from "./lease-store.js";

/** What a member needs from the outside. */
export interface ClusterMemberDeps {
  readonly config: ClusterConfig;
  readonly memberId: string;
  /** Random per process (a restarted member is a new incarnation of its id). */
  readonly incarnation: string;
  /** Wall-clock time: leases are compared across members, so their clocks must agree (NTP) well within a lease. */
  readonly nowMs: () => number;
  readonly logger: Logger;
  readonly metrics: ClusterMetrics;
  /** Every ownership key the configuration asks for now. */
  readonly keys: () => readonly string[];
  /** How many configured targets the given ownership keys hold (written in the lease record for the others' status). */
  readonly targetCount: (keys: ReadonlySet<string>) => number;
  /** Told each time the set of keys this member owns changes. */
  readonly onOwnership: (owned: ReadonlySet<string>) => void;
  readonly openStore: () => Promise<LeaseStore>;
}

/** A member of the cluster as the daemon and /readyz see it. */
export interface ClusterMember {
  start(): void;
  stop(): Promise<void>;
  /** Whether this member's lease has not expired: the fence checked before every poll and every alert. */
  leaseValid(): boolean;
  /** Whether this member owns a key now. */
  owns(key: string): boolean;
  /** The keys this member owns now. */
  ownedKeys(): ReadonlySet<string>;
  /** The alert-state bucket, once connected to NATS. */
  alertBucket(): AlertBucket | undefined;
  /** The silences, claims and config buckets, once connected to NATS. */
  sharedBuckets(): SharedBuckets | undefined;
  status(): ClusterStatus;
  /** Apply the configuration's keys now (after a reload). */
  refresh(): void;
}

/** A live member as the latest scan read its lease record (this member's own: as it is now). */
export interface MemberView {
  readonly memberId: string;
  readonly incarnation: string;
  readonly expiresAtMs: number;
  /** The KV revision of its lease record (its fence). */
  readonly revision: number;
  /** The ownership keys it owned at its last renewal, and how many targets they hold. */
  readonly keys: readonly string[];
  readonly targets: number;
}

/** Membership as one member sees it. */
export interface ClusterStatus {
  readonly memberId: string;
  readonly leaseRevision: number | null;
  /** When this member's lease runs out unless renewed (ms since epoch; 0 = it holds none). */
  readonly leaseExpiresAtMs: number;
  readonly members: readonly MemberView[];
  readonly ownedKeys: number;
  readonly pendingKeys: number;
  /** Why the member cannot renew or read the membership (null when it can). */
  readonly error: string | null;
}

interface MemberState {
  readonly deps: ClusterMemberDeps;
  readonly renewIntervalMs: number;
  readonly tickMs: number;
  store: LeaseStore | undefined;
  revision: number | null;
  leaseUntilMs: number;
  lastRenewAtMs: number;
  /** The live records read by the latest scan (other members' and this one's). */
  seen: readonly StoredLease[];
  /** When the read behind `seen` started, and when the current lease was first taken (ms). */
  seenAtMs: number;
  leaseSinceMs: number;
  /** When the latest view that was current on arrival was read (ms): the lease is renewed within a lease of it. */
  confirmedAtMs: number;
  previousMembers: readonly string[];
  ownership: Ownership;
  /** Why each failing task fails (empty when NATS answers). */
  readonly errors: Map<TaskName, string>;
  readonly running: Set<TaskName>;
  timer: NodeJS.Timeout | undefined;
  /** The keys it owned when its view went stale (its lease valid since): taken back at once by a current view. */
  suspended: ReadonlySet<string>;
  /** Fires when the view gets too old to confirm what this member owns (re-armed by each scan). */
  staleTimer: NodeJS.Timeout | undefined;
  stopped: boolean;
}

/** Create a member; nothing talks to NATS until `start()`. */
export function createClusterMember(deps: ClusterMemberDeps): ClusterMember {
  const { leaseMs } = deps.config;
  const state: MemberState = {
    deps,
    renewIntervalMs: Math.floor(leaseMs / 3),
    // membership is read this often: a dead member's targets are taken within a lease plus one tick
    tickMs: Math.min(1_000, Math.floor(leaseMs / 4)),
    store: undefined,
    revision: null,
    leaseUntilMs: 0,
    lastRenewAtMs: Number.NEGATIVE_INFINITY,
    seen: [],
    seenAtMs: Number.NEGATIVE_INFINITY,
    leaseSinceMs: Number.POSITIVE_INFINITY,
    confirmedAtMs: Number.NEGATIVE_INFINITY,
    previousMembers: [],
    ownership: NO_OWNERSHIP,
    errors: new Map(),
    running: new Set(),
    timer: undefined,
    suspended: new Set(),
    staleTimer: undefined,
    stopped: false,
  };
  return {
    start() {
      state.timer = setInterval(() => onTick(state), state.tickMs);
      onTick(state);
    },
    stop: () => stopMember(state),
    leaseValid: () => leaseValid(state),
    owns: (key) => state.ownership.owned.has(key),
    ownedKeys: () => state.ownership.owned,
    alertBucket: () => state.store?.alerts,
    sharedBuckets: () => state.store?.shared,
    status: () => statusOf(state),
    refresh: () => applyOwnership(state),
  };
}

const leaseValid = (state: MemberState): boolean => state.deps.nowMs() < state.leaseUntilMs;

/** The member's requests to NATS, each run at most once at a time (a hanging list never delays a renewal). */
type TaskName = "connect" | "renew" | "list";

/** Each tick: ownership from what is known (so an expired lease stops polls even while NATS hangs), then the NATS tasks due. */
function onTick(state: MemberState): void {
  applyOwnership(state);
  if (state.stopped) return;
  const { store, deps } = state;
  if (store === undefined) {
    runTask(state, "connect", async () => {
      const opened = await deps.openStore();
      // stopped while connecting: leave nothing open behind
      if (state.stopped) await opened.close();
      else state.store = opened;
    });
    return;
  }
  const renewDue = state.revision === null || deps.nowMs() - state.lastRenewAtMs >= state.renewIntervalMs;
  const withheld = renewDue ? leaseWithheld(state) : null;
  if (renewDue && withheld === null) runTask(state, "renew", () => renew(state, store));
  else if (withheld !== null && Number.isFinite(state.seenAtMs)) setError(state, "renew", withheld);
  runTask(state, "list", async () => {
    const readAtMs = deps.nowMs();
    state.seen = await dropExpired(state, store, await store.list());
    state.seenAtMs = readAtMs;
    if (viewCurrent(state)) state.confirmedAtMs = readAtMs;
    armStaleTimer(state);
  });
}

/**
 * Why this member must not renew (or take) its lease now, or null. A member without a current view owns
 * nothing; one that has had none for a whole lease must not hold a share either: it lets its lease lapse, and
 * the others take its keys as a dead member's. It takes a new lease only with a current view.
 */
function leaseWithheld(state: MemberState): string | null {
  if (state.revision === null)
    return viewCurrent(state) ? null : "the membership view is not current: not taking a lease";
  const { leaseMs } = state.deps.config;
  return state.deps.nowMs() - state.confirmedAtMs <= leaseMs
    ? null
    : `membership not confirmed for ${leaseMs} ms: letting the lease lapse`;
}

/**
 * Whether the membership view is recent enough to act on. A member that joins takes a key from a live owner
 * only a renew interval plus a scan after its record exists, so a view read less than that ago (less half a scan,
 * the margin for a poll in flight) shows every member that may already poll; an older view confirms nothing.
 */
function viewCurrent(state: MemberState): boolean {
  return state.deps.nowMs() - state.seenAtMs <= viewLimitMs(state);
}

const viewLimitMs = (state: MemberState): number => state.renewIntervalMs + Math.floor(state.tickMs / 2);

/** Recompute ownership the moment the latest view stops being current (not at the next tick: a tick's margin). */
function armStaleTimer(state: MemberState): void {
  clearTimeout(state.staleTimer);
  if (state.stopped) return;
  const untilStaleMs = state.seenAtMs + viewLimitMs(state) + 1 - state.deps.nowMs();
  state.staleTimer = setTimeout(() => applyOwnership(state), Math.max(0, untilStaleMs));
  state.staleTimer.unref();
}

/** Run a task unless it is running; a failure (or no answer within half a lease) is recorded, a success clears it. */
function runTask(state: MemberState, name: TaskName, task: () => Promise<void>): void {
  if (state.running.has(name)) return;
  state.running.add(name);
  // a request to an unreachable NATS can wait for a reconnect: say so well before the lease runs out
  const silentMs = Math.floor(state.deps.config.leaseMs / 2);
  const timer = setTimeout(
    () => setError(state, name, `NATS did not answer within ${silentMs} ms`),
    silentMs,
  );
  task()
    .then(
      () => setError(state, name, null),
      (error: unknown) =>
        setError(state, name, error instanceof Error ? error.message : String(error), error),
    )
    .finally(() => {
      clearTimeout(timer);
      state.running.delete(name);
      applyOwnership(state);
    });
}

/** Renew (or take) this member's lease by compare-and-set; a lost race clears it until the next tick re-creates it. */
async function renew(state: MemberState, store: LeaseStore): Promise<void> {
  const { deps } = state;
  const startedAtMs = deps.nowMs();
  const owned = state.ownership.owned;
  const lease: LeaseRecord = {
    memberId: deps.memberId,
    incarnation: deps.incarnation,
    expiresAtMs: startedAtMs + deps.config.leaseMs,
    keys: [...owned].sort(),
    targets: deps.targetCount(owned),
  };
  let revision: number | null;
  if (state.revision === null)
    revision = (await store.create(lease)) ?? (await takeExpired(state, store, lease));
  else revision = await store.renew(lease, state.revision);
  if (revision === null) {
    if (state.revision !== null)
      loseLease(state, "the lease record changed under this member (it expired and was removed)");
    return;
  }
  if (state.revision === null) state.leaseSinceMs = startedAtMs;
  state.revision = revision;
  // counted from before the request: the others read the record's expiry, which is this same instant + leaseMs
  state.leaseUntilMs = startedAtMs + deps.config.leaseMs;
  state.lastRenewAtMs = startedAtMs;
}

/** A record under this member's id exists: take it over when it expired, else another live process holds the id. */
async function takeExpired(
  state: MemberState,
  store: LeaseStore,
  lease: LeaseRecord,
): Promise<number | null> {
  const existing = (await store.list()).find((record) => record.memberId === lease.memberId);
  if (existing === undefined) return null; // removed meanwhile: created on the next tick
  if (existing.expiresAtMs > state.deps.nowMs())
    throw new Error(
      `member id ${lease.memberId} is held by another live process until ${new Date(existing.expiresAtMs).toISOString()}`,
    );
  return store.renew(lease, existing.revision);
}

/** The records still live; expired ones are removed (compare-and-set, so a late renewal wins). */
async function dropExpired(
  state: MemberState,
  store: LeaseStore,
  leases: readonly StoredLease[],
): Promise<readonly StoredLease[]> {
  const nowMs = state.deps.nowMs();
  const expired = leases.filter(
    (lease) => lease.expiresAtMs <= nowMs && lease.memberId !== state.deps.memberId,
  );
  await Promise.all(expired.map((lease) => store.remove(lease.memberId, lease.revision)));
  return leases.filter((lease) => lease.expiresAtMs > nowMs);
}

/** Recompute what this member owns from the latest scan and its own lease; tell the daemon when it changed. */
function applyOwnership(state: MemberState): void {
  const { deps } = state;
  const nowMs = deps.nowMs();
  if (state.revision !== null && !leaseValid(state))
    loseLease(state, "the lease expired before it was renewed");
  const others = state.seen
    .filter((lease) => lease.memberId !== deps.memberId && lease.expiresAtMs > nowMs)
    .map((lease) => lease.memberId);
  const members = leaseValid(state) ? [...others, deps.memberId] : others;
  // a view read before this lease began (a member back from SIGSTOP) shows the others' records as expired when
  // they are not; an older one (a slow or failing scan) may miss a member that has joined and, after its
  // handover wait, polls some of these keys: with either, this member owns nothing
  const fresh = state.seenAtMs >= state.leaseSinceMs && viewCurrent(state);
  if (!leaseValid(state)) state.suspended = new Set();
  else if (!fresh && state.ownership.owned.size > 0) state.suspended = state.ownership.owned;
  // what it owned before its view went stale, under the same lease, nobody else took (the others saw it live):
  // a current view that still gives it those keys gives them back at once, without a handover wait
  const current = fresh
    ? { ...state.ownership, owned: new Set([...state.ownership.owned, ...state.suspended]) }
    : state.ownership;
  if (fresh) state.suspended = new Set();
  const next = nextOwnership(current, {
    keys: fresh ? deps.keys() : [],
    members,
    previousMembers: state.previousMembers,
    me: deps.memberId,
    nowMs,
    handoverWaitMs: state.renewIntervalMs + state.tickMs,
  });
  state.previousMembers = members;
  const changed = !sameSet(next.owned, state.ownership.owned);
  state.ownership = next;
  deps.metrics.members.set(members.length);
  deps.metrics.ownedTargets.set(next.owned.size);
  if (changed) {
    deps.logger.info({ owned: next.owned.size, members }, "cluster ownership changed");
    deps.onOwnership(next.owned);
  }
}

/** The lease is gone: own nothing until a new one is taken (the next scan re-creates the record). */
function loseLease(state: MemberState, reason: string): void {
  state.revision = null;
  state.leaseUntilMs = 0;
  state.suspended = new Set();
  state.deps.metrics.leasesLost.inc();
  state.deps.logger.error(
    { memberId: state.deps.memberId },
    `cluster lease lost: ${reason}; polling nothing until renewed`,
  );
}

/** Record (and log once per change) why a task cannot use NATS; the metric is 1 while any task fails. */
function setError(state: MemberState, task: TaskName, message: string | null, error?: unknown): void {
  const before = state.errors.get(task) ?? null;
  if (message === null) state.errors.delete(task);
  else state.errors.set(task, message);
  state.deps.metrics.error.set(state.errors.size === 0 ? 0 : 1);
  if (message === before) return;
  if (message === null) state.deps.logger.info({ task }, "cluster: NATS answers again");
  else
    state.deps.logger.error(
      { task, err: error ?? new Error(message) },
      "cluster_error: cannot renew the lease or read the membership from NATS",
    );
}

async function stopMember(state: MemberState): Promise<void> {
  state.stopped = true;
  clearInterval(state.timer);
  clearTimeout(state.staleTimer);
  const { store, revision } = state;
  state.store = undefined;
  if (store === undefined) return;
  // leaving on purpose: remove the record so the others take the targets now, not after a lease
  if (revision !== null) await store.remove(state.deps.memberId, revision).catch(() => false);
  await store.close();
}

function statusOf(state: MemberState): ClusterStatus {
  const { deps, ownership } = state;
  const others = state.seen
    .filter((lease) => lease.memberId !== deps.memberId)
    .map((lease) => ({
      memberId: lease.memberId,
      incarnation: lease.incarnation,
      expiresAtMs: lease.expiresAtMs,
      revision: lease.revision,
      keys: [...(lease.keys ?? [])],
      targets: lease.targets ?? 0,
    }));
  const self: readonly MemberView[] =
    state.revision === null
      ? []
      : [
          {
            memberId: deps.memberId,
            incarnation: deps.incarnation,
            expiresAtMs: state.leaseUntilMs,
            revision: state.revision,
            keys: [...ownership.owned].sort(),
            targets: deps.targetCount(ownership.owned),
          },
        ];
  return {
    memberId: deps.memberId,
    leaseRevision: state.revision,
    leaseExpiresAtMs: state.leaseUntilMs,
    members: [...self, ...others].sort((a, b) => a.memberId.localeCompare(b.memberId)),
    ownedKeys: state.ownership.owned.size,
    pendingKeys: state.ownership.pendingUntilMs.size,
    error: [...state.errors.values()][0] ?? null,
  };
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((key) => b.has(key));
}
