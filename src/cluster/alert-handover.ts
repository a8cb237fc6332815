// Alert state moves with a cluster target: the owner checkpoints each key's alerts to KV, a new owner adopts them before its first poll.
import type { Logger } from "pino";
import {
  alertStateByKey,
  NO_ALERTS,
  reconcileWithJournal,
  type KeyOfLabels,
} from "../domain/alert-handover.js";
import type { AlertPayload } from "../domain/events.js";
import type { PricePoint } from "../domain/price-history.js";
import { exportAlertState, type PersistedAlertState } from "../domain/monitor.js";
import type { MonitorRunner } from "../pipeline/monitor-runner.js";
import { checkpointJson, parseCheckpointJson, type AlertCheckpoint } from "../state/alert-checkpoint.js";
import type { AlertBucket } from "./alert-bucket.js";
import {
  capHistoryField,
  historyField,
  historyFieldsByKey,
  historyOfRecord,
  historyVersionsByKey,
  nextHistoryDueMs,
  RECORD_BUDGET_BYTES,
  sameHistoryField,
  type HistoryField,
  type HistoryRejection,
} from "./history-handover.js";
import type { ClusterMember } from "./member.js";
import type { TargetKeys } from "./target-keys.js";

/** What the handover needs from cluster mode. */
export interface AlertHandoverDeps {
  readonly member: ClusterMember;
  readonly memberId: string;
  /** The ownership key of each configured target and the targets of each key (the configuration in force). */
  readonly targetKeys: () => TargetKeys;
  /** The ownership key of an alert of no known target (restored from the log), read from its labels. */
  readonly keyOfLabels: () => KeyOfLabels;
  /** The journal's last seq, recorded in each checkpoint as the file checkpoint does. */
  readonly lastSeq: () => number;
  /** The alert transitions the journal holds after `seq`, in seq order (what a checkpoint may lag behind). */
  readonly journaledAfter: (seq: number) => readonly AlertPayload[];
  /** Whether events this member published still wait for the cluster's log to take them (a checkpoint waits too). */
  readonly unpublished: () => boolean;
  /**
   * Resolves true once this member's journal holds every event the cluster's log held when asked; false when it
   * cannot tell or that takes too long (adoption then waits for the next pass).
   */
  readonly readThrough: () => Promise<boolean>;
  /** How long adoption waits for `readThrough` before it adopts anyway (logged): the lease, so no key stays unpolled longer. */
  readonly readThroughPatienceMs: number;
  readonly nowMs: () => number;
  readonly logger: Logger;
  /** Re-apply the runner's ownership filter (`owns` changed). */
  readonly restrict: () => void;
  /** Count a handover record's price history refused (malformed, oversized). */
  readonly historyRejected: (reason: HistoryRejection) => void;
  /**
   * How often (ms) each held key's price points are written to its record while held (spread over the interval,
   * only when they changed), so a new owner after a kill -9 seeds from points at most this old; 0 = only on release.
   */
  readonly historyCheckpointMs: number;
  /**
   * Count targets whose points were left out of a record written, to keep it within RECORD_BUDGET_BYTES (when the
   * key's set of left-out targets changes, not again at each write while it stays the same).
   */
  readonly historyTrimmed: (targets: number) => void;
  /**
   * The members' lease (ms): a target whose longest window is shorter than the lease and `historyCheckpointMs`
   * together gets no periodic points (after a kill -9 its window would start after them), only those of a release.
   */
  readonly leaseMs: number;
}

/** The keys whose alert state this member holds, and the work that keeps KV in step with them. */
export interface AlertHandover {
  /** Start checkpointing and adopting for this runner. */
  attach(runner: MonitorRunner): void;
  /** Whether the member owns a key and has adopted its alert state (only then are its targets run). */
  owns(key: string): boolean;
  /** Ownership or alert state changed: release, adopt and checkpoint soon (coalesced, one pass at a time). */
  request(): void;
  /** Write every held key one last time, with its price history (graceful stop, after the pipeline stopped); a failure is logged, not thrown. */
  stop(): Promise<void>;
}

/** A key's alert state as this member holds it: the KV revision to write over, the engine JSON and points last written. */
interface Held {
  revision: number;
  writtenJson: string;
  /** The price points the record holds (each write carries them until the next are due); undefined: none. */
  history: HistoryField | undefined;
  /** The points' token when last read (`historyVersionsByKey`): unchanged, they are not read again; undefined: never read. */
  historyVersion: string | undefined;
  /** When the key's points are next due to be written (Infinity: periodic checkpoints off). */
  historyDueAtMs: number;
  /** The targets whose points the last record written left out (its budget), sorted, one a line; "" none. */
  trimmedIds: string;
  /**
   * The text of this member's last write whose reply never came (a timeout): NATS may have applied it, and a
   * compare-and-set lost over it is no other member's write (the key is kept). Undefined: every write answered.
   */
  unconfirmedText: string | undefined;
}

interface HandoverState {
  readonly deps: AlertHandoverDeps;
  readonly held: Map<string, Held>;
  runner: MonitorRunner | undefined;
  scheduled: boolean;
  again: boolean;
  running: Promise<void> | undefined;
  stopped: boolean;
  timer: NodeJS.Timeout | undefined;
  /** Since when `readThrough` has kept failing (undefined while it succeeds). */
  unreadSinceMs: number | undefined;
}

/** How often a pass runs without being asked: pending alerts change without a transition, a failed claim is retried. */
const PASS_INTERVAL_MS = 1_000;
/** How soon a checkpoint held back by events still on their way to the log is tried again. */
const UNPUBLISHED_RETRY_MS = 100;

/** Create the handover; nothing is adopted until `attach` and the member's first ownership. */
export function createAlertHandover(deps: AlertHandoverDeps): AlertHandover {
  const state: HandoverState = {
    deps,
    held: new Map(),
    runner: undefined,
    scheduled: false,
    again: false,
    running: undefined,
    stopped: false,
    timer: undefined,
    unreadSinceMs: undefined,
  };
  return {
    attach(runner) {
      state.runner = runner;
      state.timer = setInterval(() => request(state), PASS_INTERVAL_MS).unref();
      request(state);
    },
    owns: (key) => state.held.has(key) && deps.member.owns(key),
    request: () => request(state),
    async stop() {
      state.stopped = true;
      clearInterval(state.timer);
      await state.running;
      if (state.runner === undefined) return;
      // NATS gone at shutdown: the new owner takes the last state written, and the member still leaves
      await checkpointChanged(state, state.runner, true).catch((error: unknown) =>
        deps.logger.error({ err: error }, "cluster_error: cannot write the last alert state to NATS"),
      );
    },
  };
}

/** Run a pass on the next turn of the event loop (never inside the publish that asked for it). */
function request(state: HandoverState): void {
  state.again = true;
  if (state.scheduled || state.running !== undefined || state.stopped) return;
  state.scheduled = true;
  setImmediate(() => {
    state.scheduled = false;
    state.running = passes(state).finally(() => (state.running = undefined));
  });
}

async function passes(state: HandoverState): Promise<void> {
  while (state.again && !state.stopped) {
    state.again = false;
    const { runner } = state;
    if (runner === undefined) return;
    try {
      await releaseLost(state, runner);
      await adoptGained(state, runner);
      await checkpointChanged(state, runner);
    } catch (error) {
      state.deps.logger.error({ err: error }, "cluster_error: cannot read or write alert state in NATS");
    }
  }
}

/** Each held key's alerts as the engine has them now (a key with none: no alerts). */
function snapshot(state: HandoverState, runner: MonitorRunner): (key: string) => PersistedAlertState {
  const { deps } = state;
  const byKey = alertStateByKey(
    exportAlertState(runner.state()),
    deps.targetKeys().keyOfTarget,
    deps.keyOfLabels(),
  );
  return (key) => byKey.get(key) ?? NO_ALERTS;
}

/** Keys this member no longer owns: their alerts leave the engine silently, their targets stop, KV gets the last state. */
async function releaseLost(state: HandoverState, runner: MonitorRunner): Promise<void> {
  const { deps } = state;
  const lost = [...state.held.keys()].filter((key) => !deps.member.owns(key));
  if (lost.length === 0) return;
  const alertsOf = snapshot(state, runner);
  // read before `restrict` stops the targets and the engine forgets their histories
  const historyOf = historyFieldsByKey(
    runner.state(),
    deps.targetKeys().targetsOfKey,
    new Set(lost),
    deps.nowMs(),
  );
  const last = lost.map((key) => ({
    key,
    held: state.held.get(key),
    alerts: alertsOf(key),
    history: historyOf(key),
  }));
  runner.release(last.flatMap(({ alerts }) => alerts.alerts.map((alert) => alert.fingerprint)));
  for (const key of lost) state.held.delete(key);
  deps.restrict();
  // a member without a lease writes nothing: the new owner already took (or will take) the state in KV
  const bucket = deps.member.alertBucket();
  if (!deps.member.leaseValid() || bucket === undefined) return;
  const writer = writerOf(state);
  await Promise.all(
    last.flatMap(({ key, held, alerts, history }) => {
      if (held === undefined) return [];
      const record = recordText(state, writer, alerts, history);
      noteTrimmed(state, key, held.trimmedIds, record.trimmedIds);
      return [writeOver(state, bucket, key, held, record.text)];
    }),
  );
}

/** Keys this member owns but holds no state of: read each from KV, claim it (compare-and-set), adopt it, start its targets. */
async function adoptGained(state: HandoverState, runner: MonitorRunner): Promise<void> {
  const { deps } = state;
  const bucket = deps.member.alertBucket();
  const gained = [...deps.member.ownedKeys()].filter((key) => !state.held.has(key));
  if (gained.length === 0 || bucket === undefined || !deps.member.leaseValid()) return;
  // a transition the old owner published after its checkpoint must be in this member's journal before the claim
  // reconciles with it: a member that has not read the log that far would adopt the alert as not firing, and
  // announce it again as new (or never resolve it)
  if (!(await logReadOrPatienceOver(state, gained.length))) return;
  const claimed = await Promise.all(gained.map((key) => claim(state, bucket, key)));
  let adopted = 0;
  const seeds: [string, readonly PricePoint[]][] = [];
  const { historyCheckpointMs } = deps;
  for (const entry of claimed) {
    if (entry === null || !deps.member.owns(entry.key)) continue;
    runner.adopt(entry.alerts);
    state.held.set(entry.key, {
      revision: entry.revision,
      writtenJson: JSON.stringify(entry.alerts),
      // while the points are checkpointed, the old owner's stay in the record until this member's are due
      history: historyCheckpointMs > 0 ? entry.carried : undefined,
      historyVersion: undefined,
      historyDueAtMs: nextHistoryDueMs(entry.key, deps.nowMs(), historyCheckpointMs),
      trimmedIds: entry.trimmedIds,
      unconfirmedText: undefined,
    });
    adopted += entry.alerts.alerts.length;
    seeds.push(...entry.history);
  }
  if (adopted > 0) deps.logger.info({ alerts: adopted }, "cluster: adopted the alert state of new targets");
  deps.restrict();
  // the targets just started: their first poll is still in flight, their candle warm-up (coarser) merges later
  for (const [targetId, points] of seeds) runner.seedHistory(targetId, points);
  if (seeds.length > 0)
    deps.logger.info({ targets: seeds.length }, "cluster: seeded the price history of new targets");
}

/**
 * Whether adoption may go on: the log is read to its end, or it has not been for a whole `readThroughPatienceMs`
 * (then the keys are adopted anyway, logged: a key unpolled for longer would be worse than a transition its old
 * owner published last being announced again).
 */
async function logReadOrPatienceOver(state: HandoverState, keys: number): Promise<boolean> {
  const { deps } = state;
  if (await deps.readThrough()) {
    state.unreadSinceMs = undefined;
    return true;
  }
  const nowMs = deps.nowMs();
  state.unreadSinceMs ??= nowMs;
  if (nowMs - state.unreadSinceMs < deps.readThroughPatienceMs) {
    deps.logger.warn(
      { keys },
      "cluster: the event log is not read up to its end yet: new keys are adopted at the next pass",
    );
    return false;
  }
  deps.logger.error(
    { keys, waitedMs: nowMs - state.unreadSinceMs },
    "cluster_error: the event log could not be read to its end: adopting new keys anyway (a transition their old owner published last may be announced again)",
  );
  return true;
}

/** Read a key's record and write it back as this member's (fencing the previous owner); null when another write won. */
async function claim(state: HandoverState, bucket: AlertBucket, key: string): Promise<Claimed | null> {
  const read = await bucket.read(key);
  const checkpoint = read.text === null ? null : parsedOrNone(state, key, read.text);
  const history = checkpoint === null || read.text === null ? [] : historyOf(state, key, read.text);
  // the log may hold transitions the checkpoint missed (its owner died between publishing and checkpointing)
  const alerts = reconcileWithJournal(
    checkpoint?.engine ?? NO_ALERTS,
    state.deps.journaledAfter(checkpoint?.lastSeq ?? 0),
    key,
    state.deps.targetKeys().keyOfTarget,
    state.deps.keyOfLabels(),
  );
  // the points stay in the record for a next owner should the key move on: until this member's own are due (with
  // periodic checkpoints off, until its first checkpoint)
  const carried = history.length === 0 ? undefined : historyField(history);
  const record = recordText(state, writerOf(state), alerts, carried);
  const revision = await bucket.write(key, record.text, read.revision);
  if (revision === null) {
    state.deps.logger.warn({ key }, "cluster: alert state changed while claimed; retrying");
    return null;
  }
  noteTrimmed(state, key, "", record.trimmedIds);
  return { key, alerts, revision, history, carried, trimmedIds: record.trimmedIds };
}

/** A key claimed: its alert state, the revision written, and the price points its record carried per target. */
interface Claimed {
  readonly key: string;
  readonly alerts: PersistedAlertState;
  readonly revision: number;
  readonly history: readonly [string, readonly PricePoint[]][];
  /** Those points as written back in the claim. */
  readonly carried: HistoryField | undefined;
  /** The targets whose points the claim's record left out (`Held.trimmedIds`). */
  readonly trimmedIds: string;
}

/** The price points a valid record carries for the key's targets; a refused part is counted and logged, never thrown. */
function historyOf(state: HandoverState, key: string, text: string): [string, readonly PricePoint[]][] {
  const { deps } = state;
  const history = historyOfRecord(text, key, deps.targetKeys().keyOfTarget);
  for (const { targetId, reason, error } of history.rejected) {
    deps.historyRejected(reason);
    deps.logger.error(
      { key, target: targetId, reason, err: error },
      "cluster: price history in NATS is invalid: the target's windows start from this member's polls",
    );
  }
  return [...history.points];
}

function parsedOrNone(state: HandoverState, key: string, text: string): AlertCheckpoint | null {
  try {
    return parseCheckpointJson(text);
  } catch (error) {
    state.deps.logger.error(
      { key, err: error },
      "cluster: alert state in NATS is invalid: starting it from the journal",
    );
    return null;
  }
}

/**
 * Write each held key whose alerts changed since last written, or whose price points are due and changed (`last`:
 * every held key, with its points: the member is leaving); a lost compare-and-set lets the key go.
 */
async function checkpointChanged(state: HandoverState, runner: MonitorRunner, last = false): Promise<void> {
  const { deps } = state;
  const bucket = deps.member.alertBucket();
  if (bucket === undefined || !deps.member.leaseValid()) return;
  // a checkpoint never runs ahead of the log: killed with an event still queued, neither holds the transition
  // (the new owner's engine decides it again) rather than the checkpoint alone (it would never be announced)
  if (deps.unpublished()) {
    setTimeout(() => request(state), UNPUBLISHED_RETRY_MS).unref();
    return;
  }
  const changed = toWrite(state, runner, last);
  const writer = writerOf(state);
  // every write's outcome is awaited: one failing (logged) does not keep the keys lost beside it from being let go
  const outcomes = await Promise.allSettled(changed.map((write) => writeHeld(state, bucket, write, writer)));
  const lost = changed.filter((_, i) => outcomes[i]?.status === "fulfilled" && outcomes[i].value === false);
  const failed = outcomes.filter((outcome) => outcome.status === "rejected");
  if (lost.length > 0)
    letGo(
      state,
      runner,
      lost.map(({ key }) => key),
    );
  if (failed.length === 0) return;
  if (last) throw failed[0]?.reason; // (logged by `stop`)
  deps.logger.error(
    { keys: failed.length, err: failed[0]?.reason },
    "cluster_error: cannot write alert state to NATS (retried at the next pass)",
  );
}

/** Keys another member wrote: it owns them now; let go without a resolve and re-adopt if still owned. */
function letGo(state: HandoverState, runner: MonitorRunner, lost: readonly string[]): void {
  const { deps } = state;
  deps.logger.error({ keys: lost.length }, "cluster: alert state written by another member: letting it go");
  const alertsNow = snapshot(state, runner);
  runner.release(lost.flatMap((key) => alertsNow(key).alerts.map((alert) => alert.fingerprint)));
  for (const key of lost) state.held.delete(key);
  deps.restrict();
  state.again = true;
}

/**
 * Write a held key by compare-and-set on the revision this member last wrote (a newer owner's record is never
 * overwritten); on success the held state follows and its points' next due time is set. False: another member wrote.
 */
async function writeHeld(
  state: HandoverState,
  bucket: AlertBucket,
  write: ToWrite,
  writer: Writer,
): Promise<boolean> {
  const { key, held } = write;
  const record = recordText(state, writer, write.alerts, write.history);
  const revision = await writeOver(state, bucket, key, held, record.text);
  if (revision === null) return false;
  noteTrimmed(state, key, held.trimmedIds, record.trimmedIds);
  Object.assign(held, {
    revision,
    writtenJson: write.json,
    history: write.history,
    historyVersion: write.historyVersion,
    trimmedIds: record.trimmedIds,
  });
  if (write.due)
    held.historyDueAtMs = nextHistoryDueMs(key, state.deps.nowMs(), state.deps.historyCheckpointMs);
  return true;
}

/**
 * Write `text` over the key's revision `held` has; a write whose reply never came is remembered, and a lost
 * compare-and-set over it (NATS had applied it) takes its revision and writes again. Null: another member wrote.
 */
async function writeOver(
  state: HandoverState,
  bucket: AlertBucket,
  key: string,
  held: Held,
  text: string,
): Promise<number | null> {
  let revision: number | null;
  try {
    revision = await bucket.write(key, text, held.revision);
  } catch (error) {
    held.unconfirmedText = text;
    throw error;
  }
  if (revision !== null) held.unconfirmedText = undefined; // applied: the unanswered one never can be
  if (revision !== null || held.unconfirmedText === undefined) return revision;
  const read = await bucket.read(key);
  if (read.text !== held.unconfirmedText) return null;
  state.deps.logger.warn(
    { key },
    "cluster: a write to NATS that timed out had been applied: the key is kept",
  );
  held.unconfirmedText = undefined;
  held.revision = read.revision;
  return writeOver(state, bucket, key, held, text);
}

/** Log and count a key's targets left out of its record when that set changed (not at each write while it stays). */
function noteTrimmed(state: HandoverState, key: string, beforeIds: string, nowIds: string): void {
  if (nowIds === beforeIds || nowIds === "") return;
  const targets = nowIds.split("\n").length;
  state.deps.historyTrimmed(targets);
  state.deps.logger.warn(
    { key, targets, budgetBytes: RECORD_BUDGET_BYTES },
    "cluster: price history too large for the key's record: the largest targets' points left out",
  );
}

/** A held key to write: its alert state now (and as JSON), the price points its record is to hold and their token. */
interface ToWrite {
  readonly key: string;
  readonly held: Held;
  readonly alerts: PersistedAlertState;
  readonly json: string;
  readonly history: HistoryField | undefined;
  readonly historyVersion: string | undefined;
  /** Its points were due: written, their next due time is set. */
  readonly due: boolean;
}

/**
 * The held keys to write now: alerts changed, or points due and changed (read and encoded only when their token
 * changed; a key due with nothing to write is next due an interval on); `last`: every key, with its points now.
 * Periodic points leave out targets whose longest window is shorter than the lease and the interval together.
 */
function toWrite(state: HandoverState, runner: MonitorRunner, last: boolean): ToWrite[] {
  const { deps } = state;
  const nowMs = deps.nowMs();
  const alertsOf = snapshot(state, runner);
  const due = new Set<string>();
  for (const [key, held] of state.held) if (last || held.historyDueAtMs <= nowMs) due.add(key);
  const minRetainMs = last ? 0 : deps.leaseMs + deps.historyCheckpointMs;
  const { targetsOfKey } = deps.targetKeys();
  const versionOf = historyVersionsByKey(runner.state(), targetsOfKey, due, minRetainMs);
  const reread = new Set([...due].filter((key) => versionOf(key) !== state.held.get(key)?.historyVersion));
  const pointsOf =
    reread.size === 0
      ? undefined
      : historyFieldsByKey(runner.state(), targetsOfKey, reread, nowMs, minRetainMs);
  const writes: ToWrite[] = [];
  for (const [key, held] of state.held) {
    const alerts = alertsOf(key);
    // most keys hold no alert: their text is known without serialising
    const json = alerts === NO_ALERTS ? NO_ALERTS_JSON : JSON.stringify(alerts);
    const history = pointsOf !== undefined && reread.has(key) ? pointsOf(key) : held.history;
    const historyVersion = due.has(key) ? versionOf(key) : held.historyVersion;
    if (json !== held.writtenJson || !sameHistoryField(history, held.history) || last)
      writes.push({ key, held, alerts, json, history, historyVersion, due: due.has(key) });
    else if (due.has(key)) {
      held.historyVersion = historyVersion;
      held.historyDueAtMs = nextHistoryDueMs(key, nowMs, deps.historyCheckpointMs);
    }
  }
  return writes;
}

/** The JSON of a key with no alerts (what most keys write, and compare with, at every pass). */
const NO_ALERTS_JSON = JSON.stringify(NO_ALERTS);

/** A key's record as written, and the targets whose points it left out (`Held.trimmedIds`). */
interface RecordText {
  readonly text: string;
  readonly trimmedIds: string;
}

/** Who writes a record: this member, under which lease revision (its fence). */
type Writer = Readonly<{ memberId: string; leaseRevision: number }>;

/**
 * The writer of the records built now: read once for the records a pass builds together (the member's status is a
 * whole view of the membership, too much to build again for each of the ~50 records a second periodic points take).
 */
function writerOf(state: HandoverState): Writer {
  const { deps } = state;
  return { memberId: deps.memberId, leaseRevision: deps.member.status().leaseRevision ?? 0 };
}

/**
 * A key's KV record: the checkpoint format of `alerts.json`, with who wrote it under which lease revision and its
 * targets' recent price points (`history`: when the key is handed over, and every `historyCheckpointMs` while
 * held), cut to RECORD_BUDGET_BYTES: the alert state is never refused for its points, and a record left with no
 * points has no `history`. Serialised once unless over the budget.
 */
function recordText(
  state: HandoverState,
  writer: Writer,
  alerts: PersistedAlertState,
  history: HistoryField | undefined,
): RecordText {
  const { deps } = state;
  const checkpoint = { lastSeq: deps.lastSeq(), engine: alerts };
  const nowMs = deps.nowMs();
  const whole = checkpointJson(checkpoint, nowMs, history === undefined ? writer : { ...writer, history });
  if (history === undefined || Buffer.byteLength(whole) <= RECORD_BUDGET_BYTES)
    return { text: whole, trimmedIds: "" };
  const bare = checkpointJson(checkpoint, nowMs, writer);
  const capped = capHistoryField(history, RECORD_BUDGET_BYTES - Buffer.byteLength(bare));
  const trimmedIds = Object.keys(history)
    .filter((targetId) => !Object.hasOwn(capped.field, targetId))
    .sort()
    .join("\n");
  if (Object.keys(capped.field).length === 0) return { text: bare, trimmedIds };
  return { text: checkpointJson(checkpoint, nowMs, { ...writer, history: capped.field }), trimmedIds };
}
