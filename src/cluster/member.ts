// One cluster member: renews its lease in NATS KV, watches who else is live, and owns its rendezvous share of the targets.
import type { Logger } from "pino";
import type { ClusterConfig } from "../config/types.js";
import { NO_OWNERSHIP, nextOwnership, ownedKeys, type Ownership } from "../domain/rendezvous.js";
import type { AlertBucket } from "./alert-bucket.js";
import type { ClusterMetrics } from "./metrics.js";
import type { SharedBuckets } from "./shared-buckets.js";
import type { LeaseChange, LeaseRecord, LeaseStore, LeaseWatch, StoredLease } from "./lease-store.js";

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

/** A live member as the watch last delivered its lease record (this member's own: as it is now). */
export interface MemberView {
  readonly memberId: string;
  readonly incarnation: string;
  readonly expiresAtMs: number;
  /** The KV revision of its lease record (its fence). */
  readonly revision: number;
  /** The ownership keys it owned at its last renewal, and how many targets they hold. */
  readonly keys: readonly string[];
  readonly targets: number;
  /** Its record says `standby` (this member's own: whether it stands by now): no member for the rendezvous. */
  readonly standby: boolean;
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
  /** Whether this member stands by (its view not yet, or no longer, current): it owns nothing and others skip it. */
  readonly standby: boolean;
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
  /** Every member's record (this one's too) as the watch delivered it, by member id. */
  readonly records: Map<string, StoredLease>;
  watch: LeaseWatch | undefined;
  /** How many renewals had begun when this member's current watch was open (its consumer created); +∞ while none is. */
  openedAfterRenewals: number;
  renewalsBegun: number;
  /**
   * `records` holds every write the server took before this instant (ms): the start of the latest renewal whose
   * own record the watch has delivered since. And when the current lease was first taken (ms).
   */
  seenAtMs: number;
  leaseSinceMs: number;
  /**
   * The latest successful renewal (revision, start, and its ordinal among the renewals begun), and the revision of
   * this member's record the watch last delivered.
   */
  renewed: { readonly revision: number; readonly startedAtMs: number; readonly ordinal: number } | undefined;
  watchedRevision: number;
  /**
   * The earliest renewal NATS took, begun once the watch was open, that the watch has delivered neither it nor a
   * later one of (its start and revision); undefined while none waits.
   */
  unechoed: { readonly sinceMs: number; readonly revision: number } | undefined;
  /** The timer that re-applies ownership when the next other member's lease runs out, and that instant (ms). */
  expiryTimer: NodeJS.Timeout | undefined;
  expiryAtMs: number;
  previousMembers: readonly string[];
  ownership: Ownership;
  /** The owned keys sorted and their target count, for the `owned` set and configured `keys` they were taken of. */
  ownedView: OwnedView | undefined;
  /** The inputs of the latest ownership step (an identical step with nothing pending is skipped). */
  lastStep: { readonly keys: readonly string[]; readonly signature: string } | undefined;
  /** The `seenAtMs` of the latest echo that was current when it arrived: the lease is renewed within a lease of it. */
  confirmedAtMs: number;
  /** The keys it owned when its view went stale (its lease valid since): taken back at once by a current view. */
  suspended: ReadonlySet<string>;
  /** Fires when the view gets too old to confirm what this member owns (re-armed by each echo). */
  staleTimer: NodeJS.Timeout | undefined;
  /** Fires when the lease runs out unless renewed (re-armed by each renewal): counted lost then, not a tick later. */
  leaseTimer: NodeJS.Timeout | undefined;
  /** A renewal asked for once the running one has finished (one at a time). */
  renewSoonTimer: NodeJS.Timeout | undefined;
  /**
   * Whether it is a member for the rendezvous: only once a view was current under its lease (its record says
   * `standby` until then), and no longer after a whole lease without a current view.
   */
  active: boolean;
  /** Why each failing task fails (empty when NATS answers). */
  readonly errors: Map<ErrorSource, string>;
  readonly running: Set<TaskName>;
  timer: NodeJS.Timeout | undefined;
  stopped: boolean;
}

/** Create a member; nothing talks to NATS until `start()`. */
export function createClusterMember(deps: ClusterMemberDeps): ClusterMember {
  const { leaseMs } = deps.config;
  const state: MemberState = {
    deps,
    renewIntervalMs: Math.floor(leaseMs / 3),
    // renewals are due this often (and retried as often); a dead member's targets are taken when its lease runs out
    tickMs: Math.min(1_000, Math.floor(leaseMs / 4)),
    store: undefined,
    revision: null,
    leaseUntilMs: 0,
    lastRenewAtMs: Number.NEGATIVE_INFINITY,
    records: new Map(),
    watch: undefined,
    openedAfterRenewals: Number.POSITIVE_INFINITY,
    renewalsBegun: 0,
    seenAtMs: Number.NEGATIVE_INFINITY,
    leaseSinceMs: Number.POSITIVE_INFINITY,
    renewed: undefined,
    watchedRevision: 0,
    unechoed: undefined,
    expiryTimer: undefined,
    expiryAtMs: Number.POSITIVE_INFINITY,
    previousMembers: [],
    ownership: NO_OWNERSHIP,
    ownedView: undefined,
    lastStep: undefined,
    confirmedAtMs: Number.NEGATIVE_INFINITY,
    suspended: new Set(),
    staleTimer: undefined,
    leaseTimer: undefined,
    renewSoonTimer: undefined,
    active: false,
    errors: new Map(),
    running: new Set(),
    timer: undefined,
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

/** What this member owns as its record and status show it: computed once per ownership and configuration. */
interface OwnedView {
  readonly owned: ReadonlySet<string>;
  readonly keys: readonly string[];
  readonly sortedKeys: readonly string[];
  readonly targets: number;
}

/**
 * The owned keys sorted and their target count, counted again only when ownership or the configured keys changed:
 * the status is read on every record written and every shared pass, and counting walks every configured target.
 */
function ownedView(state: MemberState): OwnedView {
  const { owned } = state.ownership;
  const keys = state.deps.keys();
  const cached = state.ownedView;
  if (cached?.owned === owned && cached.keys === keys) return cached;
  // frozen: the lease record and every status read share it, so an in-place sort or push would corrupt both
  const sortedKeys = Object.freeze([...owned].sort());
  const view = { owned, keys, sortedKeys, targets: state.deps.targetCount(owned) };
  state.ownedView = view;
  return view;
}

/** The member's requests to NATS, each run at most once at a time (a hanging watch never delays a renewal). */
type TaskName = "connect" | "renew" | "watch" | "drop";
/** What can fail: a NATS task, or the view (no current view for a lease). */
type ErrorSource = TaskName | "view";

/**
 * Each tick: ownership from what is known (so an expired lease stops polls even while NATS hangs), then the NATS
 * tasks due. A renewal is due on the last tick before a third of a lease has passed, so each renewal's echo in
 * the watch keeps the view fresh (`seenAtMs` never older than a third of a lease) while NATS answers.
 */
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
  if (state.watch !== undefined && watchSilent(state)) reopenWatch(state, state.watch);
  if (state.watch === undefined) runTask(state, "watch", () => openWatch(state, store));
  dropExpired(state, deps.nowMs());
  standDownIfUnconfirmed(state);
  const dueMs = state.renewIntervalMs - state.tickMs;
  if (state.revision === null || deps.nowMs() - state.lastRenewAtMs >= dueMs)
    runTask(state, "renew", () => renew(state, store));
}

/**
 * Step back to standby after a whole lease without a current view (counted from this lease's start at the
 * earliest): it owns nothing already (its view is stale), and its next renewal tells the others to take its keys
 * now instead of at its lease's end. It stays in standby, renewing, until a view is current again.
 */
function standDownIfUnconfirmed(state: MemberState): void {
  const { leaseMs } = state.deps.config;
  if (!state.active || state.deps.nowMs() - Math.max(state.confirmedAtMs, state.leaseSinceMs) <= leaseMs)
    return;
  state.active = false;
  state.lastRenewAtMs = Number.NEGATIVE_INFINITY; // say so at once
  setError(state, "view", `membership not confirmed for ${leaseMs} ms: standing by`);
}

/**
 * Whether the view is recent enough to act on. A member that joins takes a key from a live owner only a renew
 * interval plus a tick after its record exists, so a view holding every write up to less than that ago (less half
 * a tick, the margin for a poll in flight) shows every member that may already poll; an older view confirms nothing.
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

/**
 * Whether the watch delivers nothing: a renewal NATS took, begun once the watch was open, has not come back through
 * it (nor any later one) within the view limit, by when its echo could no longer make the view current. Echoes
 * take milliseconds; a watch whose consumer died with its NATS node stays silent while renewals reach the new
 * leader (nats.js notices only after two missed 30 s heartbeats). A watch slower than that could not make the view
 * current either; each new one waits for a renewal begun once it was open, so it is reopened at most once a renewal.
 */
function watchSilent(state: MemberState): boolean {
  const { unechoed } = state;
  return unechoed !== undefined && state.deps.nowMs() - unechoed.sinceMs > viewLimitMs(state);
}

/** End a watch that delivers nothing (said and counted); the caller opens a new one at once. */
function reopenWatch(state: MemberState, watch: LeaseWatch): void {
  state.deps.logger.warn(
    { unechoedMs: state.deps.nowMs() - (state.unechoed?.sinceMs ?? 0) },
    "cluster: the membership watch has not delivered this member's renewal: reopening it",
  );
  state.deps.metrics.watchReopened.inc();
  state.watch = undefined;
  watch.stop();
}

/** Watch the lease records (a view rebuilt from nothing: fresh again only after the next renewal's echo). */
async function openWatch(state: MemberState, store: LeaseStore): Promise<void> {
  state.records.clear();
  state.seenAtMs = Number.NEGATIVE_INFINITY;
  state.openedAfterRenewals = Number.POSITIVE_INFINITY;
  state.unechoed = undefined;
  const watch = await store.watch((change) => onLeaseChange(state, change));
  if (state.stopped) return watch.stop();
  state.watch = watch;
  // a renewal begun before may be in the first snapshot: only a later one's echo confirms the view, so renew now
  state.openedAfterRenewals = state.renewalsBegun;
  renewSoon(state, store);
  watch.ended
    .then(
      () => undefined,
      (error: unknown) =>
        setError(state, "watch", error instanceof Error ? error.message : String(error), error),
    )
    .finally(() => {
      // ended by itself (NATS, or stopped): no view until a new one opens; a replaced watch's view is the new one's
      if (state.watch !== watch) return;
      state.watch = undefined;
      state.seenAtMs = Number.NEGATIVE_INFINITY;
    });
}

/** A record changed: keep it, note this member's renewal echoed back, and apply ownership. */
function onLeaseChange(state: MemberState, change: LeaseChange): void {
  if (change.lease === null) state.records.delete(change.memberId);
  else state.records.set(change.memberId, change.lease);
  if (change.memberId === state.deps.memberId && change.lease !== null) {
    state.watchedRevision = change.lease.revision;
    if (state.unechoed !== undefined && change.lease.revision >= state.unechoed.revision)
      state.unechoed = undefined;
    markEchoed(state);
  }
  scheduleExpiry(state);
  applyOwnership(state);
}

/**
 * The latest renewal's record came back through the watch: the view holds every write before that renewal began,
 * provided the renewal began after the watch was opened. A renewal from before is in the watch's first snapshot,
 * which delivers each record's latest value, not in write order: records written after it may still be on the way.
 */
function markEchoed(state: MemberState): void {
  const { renewed } = state;
  if (renewed === undefined || renewed.revision !== state.watchedRevision) return;
  if (renewed.startedAtMs <= state.seenAtMs || renewed.ordinal <= state.openedAfterRenewals) return;
  state.seenAtMs = renewed.startedAtMs;
  if (viewCurrent(state)) {
    state.confirmedAtMs = state.seenAtMs;
    // a current view under its lease: a member for the rendezvous from its next renewal on (renewed at once)
    if (!state.active && state.seenAtMs >= state.leaseSinceMs) {
      state.active = true;
      setError(state, "view", null);
      if (state.store !== undefined) {
        const store = state.store;
        runTask(state, "renew", () => renew(state, store));
      }
    }
  }
  armStaleTimer(state);
}

/** Re-apply ownership (and remove the record) when the next other member's lease runs out. */
function scheduleExpiry(state: MemberState): void {
  const nowMs = state.deps.nowMs();
  let nextMs = Number.POSITIVE_INFINITY;
  for (const lease of state.records.values())
    if (lease.memberId !== state.deps.memberId && lease.expiresAtMs > nowMs)
      nextMs = Math.min(nextMs, lease.expiresAtMs);
  if (nextMs === state.expiryAtMs) return;
  clearTimeout(state.expiryTimer);
  state.expiryAtMs = nextMs;
  if (nextMs === Number.POSITIVE_INFINITY) return;
  state.expiryTimer = setTimeout(
    () => {
      state.expiryAtMs = Number.POSITIVE_INFINITY;
      scheduleExpiry(state);
      applyOwnership(state);
      dropExpired(state, state.deps.nowMs());
    },
    nextMs - nowMs + 1,
  );
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
  const ordinal = ++state.renewalsBegun;
  const owned = ownedView(state);
  const lease: LeaseRecord = {
    memberId: deps.memberId,
    incarnation: deps.incarnation,
    expiresAtMs: startedAtMs + deps.config.leaseMs,
    keys: owned.sortedKeys,
    targets: owned.targets,
    standby: !state.active,
  };
  const { standby } = lease;
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
  state.renewed = { revision, startedAtMs, ordinal };
  const afterWatch = ordinal > state.openedAfterRenewals;
  if (afterWatch && state.unechoed === undefined && state.watchedRevision < revision)
    state.unechoed = { sinceMs: startedAtMs, revision };
  // counted from before the request: the others read the record's expiry, which is this same instant + leaseMs
  state.leaseUntilMs = startedAtMs + deps.config.leaseMs;
  state.lastRenewAtMs = startedAtMs;
  clearTimeout(state.leaseTimer);
  if (!state.stopped) {
    state.leaseTimer = setTimeout(() => applyOwnership(state), state.leaseUntilMs + 1 - deps.nowMs());
    state.leaseTimer.unref();
  }
  markEchoed(state);
  // it became a member, or stood by, while this record was on its way: the next tick writes what it is now
  if (standby === state.active) state.lastRenewAtMs = Number.NEGATIVE_INFINITY;
  // a watch opened while this record was on its way (its own renewal found this one running): confirm it now
  if (!afterWatch && state.openedAfterRenewals !== Number.POSITIVE_INFINITY) renewSoon(state, store);
}

/** Renew once a renewal that just ended has finished its task's bookkeeping (a zero timer); skipped while one runs. */
function renewSoon(state: MemberState, store: LeaseStore): void {
  if (state.stopped || state.renewSoonTimer !== undefined) return;
  state.renewSoonTimer = setTimeout(() => {
    state.renewSoonTimer = undefined;
    runTask(state, "renew", () => renew(state, store));
  }, 0);
  state.renewSoonTimer.unref();
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

/**
 * Remove the other members' expired records (compare-and-set, so a late renewal wins); the watch then drops them.
 * Tried when one expires and on each tick until the watch shows it gone, never in a loop.
 */
function dropExpired(state: MemberState, nowMs: number): void {
  const { store, deps } = state;
  const expired = [...state.records.values()].filter(
    (lease) => lease.expiresAtMs <= nowMs && lease.memberId !== deps.memberId,
  );
  if (store === undefined || expired.length === 0) return;
  runTask(state, "drop", async () => {
    await Promise.all(expired.map((lease) => store.remove(lease.memberId, lease.revision)));
  });
}

/** The members whose leases are live now, by the watched records and this member's own lease. */
function liveMembers(state: MemberState, nowMs: number): string[] {
  const { memberId } = state.deps;
  const others: string[] = [];
  for (const lease of state.records.values())
    if (lease.memberId !== memberId && lease.expiresAtMs > nowMs && lease.standby !== true)
      others.push(lease.memberId);
  if (leaseValid(state) && state.active) others.push(memberId);
  return others.sort();
}

/** Recompute what this member owns from the watched records and its own lease; tell the daemon when it changed. */
function applyOwnership(state: MemberState): void {
  const { deps } = state;
  const nowMs = deps.nowMs();
  if (state.revision !== null && !leaseValid(state))
    loseLease(state, "the lease expired before it was renewed");
  const members = liveMembers(state, nowMs);
  // a view older than this lease (a member back from SIGSTOP) shows the others' records as expired when they are
  // not; an older one (a slow watch) may miss a member that has joined and, after its handover wait, polls some
  // of these keys: with either, this member owns nothing
  const fresh = state.seenAtMs >= state.leaseSinceMs && viewCurrent(state);
  const all = deps.keys();
  const signature = `${fresh}|${members.join(",")}|${state.previousMembers.join(",")}`;
  const last = state.lastStep;
  const pending = state.ownership.pendingUntilMs.size > 0;
  // a stale view is stepped every time (its renewal may have been held back a tick): only a fresh one is skipped
  if (fresh && last !== undefined && last.keys === all && last.signature === signature && !pending) return;
  state.lastStep = { keys: all, signature };
  if (!fresh) renewIfGaining(state, all, members, nowMs);
  if (!leaseValid(state) || !state.active) state.suspended = new Set();
  else if (!fresh && state.ownership.owned.size > 0) state.suspended = state.ownership.owned;
  // what it owned before its view went stale, under the same lease, nobody else took (the others saw it live):
  // a current view that still gives it those keys gives them back at once, without a handover wait
  const current = fresh
    ? { ...state.ownership, owned: new Set([...state.ownership.owned, ...state.suspended]) }
    : state.ownership;
  if (fresh) state.suspended = new Set();
  const step = nextOwnership(current, {
    keys: fresh ? all : [],
    members,
    previousMembers: state.previousMembers,
    me: deps.memberId,
    nowMs,
    handoverWaitMs: state.renewIntervalMs + state.tickMs,
  });
  // a stale view keeps the handovers under way as they are (their waits are not restarted when it is fresh again)
  const next = fresh ? step : { owned: step.owned, pendingUntilMs: state.ownership.pendingUntilMs };
  state.previousMembers = members;
  const changed = !sameSet(next.owned, state.ownership.owned);
  state.ownership = next;
  deps.metrics.members.set(members.length);
  deps.metrics.ownedTargets.set(ownedView(state).targets);
  if (changed) {
    deps.logger.info({ owned: next.owned.size, members }, "cluster ownership changed");
    deps.onOwnership(next.owned);
  }
}

/**
 * The view is not fresh but would give this member keys (a member left, or a handover is due): renew now (at
 * most once a tick), so its echo makes the view fresh instead of waiting for the next renewal.
 */
function renewIfGaining(
  state: MemberState,
  keys: readonly string[],
  members: readonly string[],
  nowMs: number,
): void {
  const { store, deps } = state;
  if (store === undefined || state.revision === null || nowMs - state.lastRenewAtMs < state.tickMs) return;
  const mine = ownedKeys(keys, members, deps.memberId);
  if ([...mine].some((key) => !state.ownership.owned.has(key)))
    runTask(state, "renew", () => renew(state, store));
}

/** The lease is gone: own nothing until a new one is taken (the next scan re-creates the record). */
function loseLease(state: MemberState, reason: string): void {
  state.revision = null;
  state.leaseUntilMs = 0;
  state.suspended = new Set();
  state.active = false;
  state.deps.metrics.leasesLost.inc();
  state.deps.logger.error(
    { memberId: state.deps.memberId },
    `cluster lease lost: ${reason}; polling nothing until renewed`,
  );
}

/** Record (and log once per change) why a task cannot use NATS; the metric is 1 while any task fails. */
function setError(state: MemberState, task: ErrorSource, message: string | null, error?: unknown): void {
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
  clearTimeout(state.expiryTimer);
  clearTimeout(state.staleTimer);
  clearTimeout(state.leaseTimer);
  clearTimeout(state.renewSoonTimer);
  state.watch?.stop();
  const { store, revision } = state;
  state.store = undefined;
  if (store === undefined) return;
  // leaving on purpose: remove the record so the others take the targets now, not after a lease
  if (revision !== null) await store.remove(state.deps.memberId, revision).catch(() => false);
  await store.close();
}

function statusOf(state: MemberState): ClusterStatus {
  const { deps } = state;
  const nowMs = deps.nowMs();
  const others = [...state.records.values()]
    .filter((lease) => lease.memberId !== deps.memberId && lease.expiresAtMs > nowMs)
    .map((lease) => ({
      memberId: lease.memberId,
      incarnation: lease.incarnation,
      expiresAtMs: lease.expiresAtMs,
      revision: lease.revision,
      keys: lease.keys ?? [],
      targets: lease.targets ?? 0,
      standby: lease.standby === true,
    }));
  const owned = ownedView(state);
  const self: readonly MemberView[] =
    state.revision === null
      ? []
      : [
          {
            memberId: deps.memberId,
            incarnation: deps.incarnation,
            expiresAtMs: state.leaseUntilMs,
            revision: state.revision,
            keys: owned.sortedKeys,
            targets: owned.targets,
            standby: !state.active,
          },
        ];
  return {
    memberId: deps.memberId,
    leaseRevision: state.revision,
    leaseExpiresAtMs: state.leaseUntilMs,
    members: [...self, ...others].sort((a, b) => a.memberId.localeCompare(b.memberId)),
    ownedKeys: state.ownership.owned.size,
    pendingKeys: state.ownership.pendingUntilMs.size,
    standby: !state.active,
    error: [...state.errors.values()][0] ?? null,
  };
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((key) => b.has(key));
}
