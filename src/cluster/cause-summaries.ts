// The members' cause summaries in NATS KV (bucket pm_cluster_causes, key `causes.<memberId>`): each member writes what
// its cause rules read of its own targets and alerts when a verdict could change (at most once a pass, a second) and at
// least every REFRESH_MS (the bucket forgets a record nobody rewrote), watches every member's record, and hands its
// runner the union of the counting records (merged once per change of them) and the cause alerts firing in the
// cluster's log.
import type { KV, KvEntry } from "@nats-io/kv";
import type { Logger } from "pino";
import { mergePeerCauses, NO_PEERS, summaryVerdictText, type PeerCauses } from "../domain/cause-summary.js";
import { causeConfigHashOf, causeSummary, type MonitorState } from "../domain/monitor.js";
import { isCauseKind } from "../domain/rules/index.js";
import type { EventSource } from "../pipeline/event-hub.js";
import type { MonitorRunner } from "../pipeline/monitor-runner.js";
import {
  countingRecords,
  DEAD_HOLD_MS,
  MISMATCH_HOLD_MS,
  offsetSample,
  recordOf,
  REFRESH_MS,
  serverOffsetMs,
  withOffsetSample,
  type CauseRecord,
  type HeldRecord,
} from "./cause-records.js";
import type { ClusterMember } from "./member.js";

/** A summary larger than this is not written, its record deleted (a KV value is at most 1 MiB): the others judge without it. */
const MAX_RECORD_BYTES = 512 * 1024;

/** What the summaries need from cluster mode. */
export interface CauseSummariesDeps {
  /** The bucket, once connected to NATS. */
  readonly bucket: () => KV | undefined;
  readonly memberId: string;
  readonly incarnation: string;
  readonly member: Pick<ClusterMember, "status" | "leaseValid">;
  /** The runner, once the pipeline runs. */
  readonly runner: () => MonitorRunner | undefined;
  readonly logger: Logger;
  readonly nowMs: () => number;
  /** A member's record is left out for its configuration hash (once a streak): another one, or none (an older version). */
  readonly excluded: (reason: "config" | "no_hash") => void;
}

/** This member's part in the shared cause summaries. */
export interface CauseSummaries {
  /** Write and watch from now on (a pass every `intervalMs`); `log` is the hub fed from the cluster's log. */
  start(log: EventSource, intervalMs: number): void;
  /** Stop, and delete this member's record (best effort: else it stops counting with the member's lease). */
  stop(): Promise<void>;
}

interface SummariesState {
  readonly deps: CauseSummariesDeps;
  /** Every member's record as the watch delivered it, by member id. */
  readonly records: Map<string, HeldRecord>;
  watching: KV | undefined;
  /** Bumped by every watch started and by stop: a watch whose number is not the current one is superseded. */
  watchNumber: number;
  /** The watch delivered the records the bucket held when it started: a judging member may step its parents. */
  ready: boolean;
  /** The verdict text (hash and summaryVerdictText) last written (null: none written by this process), and when. */
  written: { readonly verdict: string | null; readonly atMs: number };
  writing: boolean;
  /** Stops the running watch. */
  stopWatch: () => void;
  /** Whether the last write failed, and whether the last watch did: each logged once per streak. */
  writeFailed: boolean;
  watchFailed: boolean;
  log: EventSource | undefined;
  /** Samples of this member's clock minus the server's, from its own records as the watch delivered them. */
  offsetSamples: readonly number[];
  /** The records counted last and their union: the same records give the same union, not merged again. */
  merged: { readonly records: readonly CauseRecord[]; readonly peers: PeerCauses };
  /** The members whose records are left out for their configuration hash now, with that hash (null: none). */
  mismatched: ReadonlyMap<string, string | null>;
  /** Since when some record is left out for its hash, and whether that hold ended (null: none is): heldForConfig. */
  mismatchHold: { readonly sinceMs: number; ended: boolean } | null;
}

const ENCODER = new TextEncoder();
const KEY_PREFIX = "causes.";

/** Create the summaries; nothing runs until `start`. */
export function createCauseSummaries(deps: CauseSummariesDeps): CauseSummaries {
  const state: SummariesState = {
    deps,
    records: new Map(),
    watching: undefined,
    watchNumber: 0,
    ready: false,
    stopWatch: () => undefined,
    written: { verdict: null, atMs: 0 },
    writing: false,
    writeFailed: false,
    watchFailed: false,
    log: undefined,
    offsetSamples: [],
    merged: { records: [], peers: NO_PEERS },
    mismatched: new Map(),
    mismatchHold: null,
  };
  let timer: NodeJS.Timeout | undefined;
  let events: { unsubscribe(): void } | undefined;
  return {
    start(log, intervalMs) {
      state.log = log;
      // a cause alert firing or resolving in the log relinks this member's children at its next cause pass
      events = log.events$.subscribe((event) => {
        if (event.type === "alert" && isCauseKind(event.alert.rule)) apply(state);
      });
      timer = setInterval(() => void pass(state), intervalMs).unref();
      void pass(state);
    },
    async stop() {
      clearInterval(timer);
      events?.unsubscribe();
      state.watching = undefined;
      state.watchNumber++;
      state.stopWatch();
      const kv = deps.bucket();
      if (kv !== undefined && state.written.verdict !== null)
        await kv.delete(`${KEY_PREFIX}${deps.memberId}`).catch(() => undefined);
    },
  };
}

/** Watch the bucket if not watching it, write this member's summary if it changed, and hand the runner the union. */
async function pass(state: SummariesState): Promise<void> {
  const kv = state.deps.bucket();
  if (kv === undefined || state.writing) {
    // records still age and members still leave while NATS is away or a write hangs; without NATS, no judging
    if (kv === undefined) state.ready = false;
    apply(state);
    return;
  }
  if (state.watching !== kv) watch(state, kv);
  state.writing = true;
  try {
    await write(state, kv);
    state.writeFailed = false;
  } catch (error) {
    if (!state.writeFailed)
      state.deps.logger.error(
        { err: error },
        "cluster_error: cannot write the cause summary to NATS (retrying)",
      );
    state.writeFailed = true;
  } finally {
    state.writing = false;
  }
  apply(state);
}

/**
 * Write this member's summary while its lease is valid, when what the others' verdicts read of it changed (its
 * children's values alone ride along with the next write) or a refresh is due.
 */
async function write(state: SummariesState, kv: KV): Promise<void> {
  const { deps } = state;
  const runner = deps.runner();
  const nowMs = deps.nowMs();
  if (runner === undefined || !deps.member.leaseValid()) return;
  const monitor = runner.state();
  const summary = causeSummary(monitor, nowMs);
  const key = `${KEY_PREFIX}${deps.memberId}`;
  if (summary === null) {
    if (state.written.verdict !== null) await kv.delete(key);
    state.written = { verdict: null, atMs: nowMs };
    return;
  }
  const configHash = causeConfigHashOf(monitor);
  const verdict = `${configHash}\n${summaryVerdictText(summary)}`;
  if (verdict === state.written.verdict && nowMs - state.written.atMs < REFRESH_MS) return;
  const record: CauseRecord = {
    memberId: deps.memberId,
    incarnation: deps.incarnation,
    atMs: nowMs,
    configHash,
    summary,
  };
  const value = ENCODER.encode(JSON.stringify(record));
  if (value.byteLength > MAX_RECORD_BYTES) {
    // an older record would count on with a summary from before: the others judge without this member's part
    if (verdict !== state.written.verdict)
      deps.logger.error(
        { bytes: value.byteLength },
        "cluster_error: the cause summary is too large to share (its record deleted: the others judge without it)",
      );
    await kv.delete(key);
    state.written = { verdict, atMs: nowMs };
    return;
  }
  await kv.put(key, value);
  state.written = { verdict, atMs: nowMs };
}

/**
 * Keep every record the bucket holds, then every change; a watch that ends is restarted by a pass, and a new one
 * (a new bucket after a reconnect) stops the one before. The peers are ready once the records stored when the watch
 * started are in (the first update: the last of them, or a new write).
 */
function watch(state: SummariesState, kv: KV): void {
  state.stopWatch();
  state.stopWatch = () => undefined;
  state.watching = kv;
  state.ready = false;
  const number = ++state.watchNumber;
  const current = (): boolean => state.watchNumber === number;
  const run = async (): Promise<void> => {
    // unknown (the status failed): ready at the first update, as when some are stored (this member's own write is one)
    const stored = await kv.status().then(
      (status) => status.values,
      () => Number.NaN,
    );
    const entries = await kv.watch({ key: `${KEY_PREFIX}*` });
    if (!current()) {
      entries.stop(); // a newer watch started while this one was opening
      return;
    }
    state.stopWatch = () => entries.stop();
    if (stored === 0) state.ready = true;
    for await (const entry of entries) {
      if (!current()) break;
      receive(state, entry);
      if (entry.isUpdate) state.ready = true;
      state.watchFailed = false;
      apply(state);
    }
  };
  run()
    .catch((error: unknown) => {
      if (!state.watchFailed)
        state.deps.logger.warn(
          { err: error },
          "cluster: watching the cause summaries in NATS failed, re-watching",
        );
      state.watchFailed = true;
    })
    .finally(() => {
      // the records stop coming: a judging member steps no parent until a new watch delivered them again
      if (current()) [state.watching, state.ready] = [undefined, false];
    });
}

/** Hold a delivered record (forget its member's on a delete or a malformed one); this member's own is a clock sample. */
function receive(state: SummariesState, entry: KvEntry): void {
  const { deps } = state;
  const memberId = entry.key.slice(KEY_PREFIX.length);
  const record = recordOf(entry);
  if (record === null || record.memberId !== memberId) {
    state.records.delete(memberId);
    return;
  }
  const createdMs = entry.created.getTime();
  state.records.set(memberId, { record, createdMs, goneSinceMs: null });
  if (memberId !== deps.memberId || record.incarnation !== deps.incarnation) return;
  const sample = offsetSample(record.atMs, createdMs, deps.nowMs());
  if (sample !== null) state.offsetSamples = withOffsetSample(state.offsetSamples, sample);
}

/** Hand the runner the counting peers' union (this member's own part is its engine) and the causes firing in the log. */
function apply(state: SummariesState): void {
  const { deps, log } = state;
  const runner = deps.runner();
  if (runner === undefined || log === undefined) return;
  const firing = new Set(
    log
      .activeAlerts()
      .filter((alert) => isCauseKind(alert.rule))
      .map((alert) => alert.fingerprint),
  );
  const peers = livePeers(state, runner.state());
  // run whether ready or not: a hold's clock starts with the mismatch, not when the watch is next ready
  const held = heldForConfig(state, deps.nowMs(), runner.state().cluster?.judges === true);
  runner.clusterCauses(peers, firing, state.ready && !held);
}

/**
 * Whether a judging member steps no parent because some peer's record is left out for its configuration hash (a
 * rolling reload or upgrade): judging a part of the cluster would resolve a firing cause and fire it again once all
 * run the same. At most MISMATCH_HOLD_MS from the first such record; then it judges without them, logged once (by
 * the judging member: `judges`).
 */
function heldForConfig(state: SummariesState, nowMs: number, judges: boolean): boolean {
  if (state.mismatched.size === 0) {
    state.mismatchHold = null;
    return false;
  }
  state.mismatchHold ??= { sinceMs: nowMs, ended: false };
  if (nowMs - state.mismatchHold.sinceMs <= MISMATCH_HOLD_MS) return true;
  if (!state.mismatchHold.ended && judges)
    state.deps.logger.warn(
      { members: [...state.mismatched.keys()], heldMs: MISMATCH_HOLD_MS },
      "cluster: members still run other cause rules: the cause rules judge without their part from now on",
    );
  if (judges) state.mismatchHold.ended = true;
  return false;
}

/**
 * The union of the peers' records that count (countingRecords) under `monitor`'s configuration hash, merged again
 * only when they changed; records that never will count again are forgotten, and a member newly left out for its
 * hash is logged and counted.
 */
function livePeers(state: SummariesState, monitor: MonitorState): PeerCauses {
  const { deps, records } = state;
  const nowMs = deps.nowMs();
  const live = new Map(deps.member.status().members.map((view) => [view.memberId, view.incarnation]));
  const counting = countingRecords(records, {
    live,
    selfId: deps.memberId,
    nowMs,
    configHash: causeConfigHashOf(monitor),
    offsetMs: serverOffsetMs(state.offsetSamples),
  });
  for (const [memberId, held] of records)
    if (!live.has(memberId) && nowMs - (held.goneSinceMs ?? nowMs) > DEAD_HOLD_MS) records.delete(memberId);
  noteMismatches(state, counting.mismatched, causeConfigHashOf(monitor));
  const before = state.merged.records;
  const same =
    before.length === counting.records.length && before.every((record, i) => record === counting.records[i]);
  if (!same)
    state.merged = {
      records: counting.records,
      peers: mergePeerCauses(counting.records.map((record) => record.summary)),
    };
  return state.merged.peers;
}

/** Log and count each member newly left out for its configuration hash (or with another hash than before). */
function noteMismatches(
  state: SummariesState,
  mismatched: ReadonlyMap<string, string | null>,
  ours: string,
): void {
  for (const [memberId, theirs] of mismatched) {
    if (state.mismatched.has(memberId) && state.mismatched.get(memberId) === theirs) continue;
    state.deps.excluded(theirs === null ? "no_hash" : "config");
    state.deps.logger.warn(
      { member: memberId, configHash: theirs, ownConfigHash: ours },
      theirs === null
        ? "cluster: a member's cause summary carries no configuration hash (an older version): the cause rules judge without it"
        : "cluster: a member's cause summary was written under other cause rules (a rolling reload?): the cause rules judge without it until both run the same",
    );
  }
  state.mismatched = mismatched;
}
