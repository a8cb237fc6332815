// The members' cause summaries in NATS KV (bucket pm_cluster_causes, key `causes.<memberId>`): each member writes what
// its cause rules read of its own targets and alerts when it changed (at most once a pass, a second) and at least
// every REFRESH_MS (the bucket forgets a record nobody rewrote), watches every member's record, and hands its runner the
// union of the live members' records and the cause alerts firing in the cluster's log.
import type { KV, KvEntry } from "@nats-io/kv";
import type { Logger } from "pino";
import { z } from "zod";
import { mergePeerCauses, type CauseSummary } from "../domain/cause-summary.js";
import { RULE_KINDS } from "../domain/events.js";
import { causeSummary } from "../domain/monitor.js";
import { isCauseKind } from "../domain/rules/index.js";
import type { EventSource } from "../pipeline/event-hub.js";
import type { MonitorRunner } from "../pipeline/monitor-runner.js";
import type { ClusterMember } from "./member.js";

/** A member rewrites its unchanged summary this often, well within the bucket's max age. */
const REFRESH_MS = 15_000;
/** A record written longer ago than this no longer counts (its member cannot write, or the bucket lost it). */
export const STALE_MS = 2 * REFRESH_MS;
/**
 * A member that left the view (kill -9) counts with its last record this long after: its targets come back only
 * once the others adopted and polled them (a peer's or this engine's newer state of a target wins).
 */
export const DEAD_HOLD_MS = 60_000;
/** A summary larger than this is not written, its record deleted (a KV value is at most 1 MiB): the others judge without it. */
const MAX_RECORD_BYTES = 512 * 1024;

/** A record as this member holds it: when NATS stored it (its server's clock), and since when its member is gone. */
export interface HeldRecord {
  readonly record: CauseRecord;
  readonly storedAtMs: number;
  goneSinceMs: number | null;
}

/** A member's record: who wrote it (the process: a record of an earlier incarnation does not count), when, and what. */
export interface CauseRecord {
  readonly memberId: string;
  readonly incarnation: string;
  readonly atMs: number;
  readonly summary: CauseSummary;
}

const CAUSE_RECORD = z.object({
  memberId: z.string(),
  incarnation: z.string(),
  atMs: z.number(),
  summary: z.object({
    failing: z.array(
      z.object({ id: z.string(), kind: z.string(), network: z.boolean(), sinceMs: z.number() }),
    ),
    held: z.array(z.string()),
    unpolled: z.array(z.string()),
    unjudged: z.record(z.string(), z.array(z.string())),
    pairs: z.array(z.string()),
    children: z.array(
      z.object({
        fingerprint: z.string(),
        rule: z.enum(RULE_KINDS),
        labels: z.record(z.string(), z.string()),
        status: z.enum(["pending", "firing"]),
        active: z.boolean(),
        value: z.number().nullable(),
        pendingSinceMs: z.number(),
      }),
    ),
  }),
});

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
  /** The watch delivered the records the bucket held when it started: a judging member may step its parents. */
  ready: boolean;
  /** The text last written (null: none written by this process), and when. */
  written: { readonly text: string | null; readonly atMs: number };
  writing: boolean;
  /** Stops the running watch. */
  stopWatch: () => void;
  /** Whether the last write failed, and whether the last watch did: each logged once per streak. */
  writeFailed: boolean;
  watchFailed: boolean;
  log: EventSource | undefined;
}

const ENCODER = new TextEncoder();
const KEY_PREFIX = "causes.";

/** Create the summaries; nothing runs until `start`. */
export function createCauseSummaries(deps: CauseSummariesDeps): CauseSummaries {
  const state: SummariesState = {
    deps,
    records: new Map(),
    watching: undefined,
    ready: false,
    stopWatch: () => undefined,
    written: { text: null, atMs: 0 },
    writing: false,
    writeFailed: false,
    watchFailed: false,
    log: undefined,
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
      state.stopWatch();
      const kv = deps.bucket();
      if (kv !== undefined && state.written.text !== null)
        await kv.delete(`${KEY_PREFIX}${deps.memberId}`).catch(() => undefined);
    },
  };
}

/** Watch the bucket if not watching it, write this member's summary if it changed, and hand the runner the union. */
async function pass(state: SummariesState): Promise<void> {
  const kv = state.deps.bucket();
  if (kv === undefined || state.writing) return;
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

/** Write this member's summary when it changed (or is due for a refresh) while its lease is valid. */
async function write(state: SummariesState, kv: KV): Promise<void> {
  const { deps } = state;
  const runner = deps.runner();
  const nowMs = deps.nowMs();
  if (runner === undefined || !deps.member.leaseValid()) return;
  const summary = causeSummary(runner.state(), nowMs);
  const key = `${KEY_PREFIX}${deps.memberId}`;
  if (summary === null) {
    if (state.written.text !== null) await kv.delete(key);
    state.written = { text: null, atMs: nowMs };
    return;
  }
  const text = JSON.stringify(summary);
  if (text === state.written.text && nowMs - state.written.atMs < REFRESH_MS) return;
  const record: CauseRecord = {
    memberId: deps.memberId,
    incarnation: deps.incarnation,
    atMs: nowMs,
    summary,
  };
  const value = ENCODER.encode(JSON.stringify(record));
  if (value.byteLength > MAX_RECORD_BYTES) {
    // an older record would count on with a summary from before: the others judge without this member's part
    if (text !== state.written.text)
      deps.logger.error(
        { bytes: value.byteLength },
        "cluster_error: the cause summary is too large to share (its record deleted: the others judge without it)",
      );
    await kv.delete(key);
    state.written = { text, atMs: nowMs };
    return;
  }
  await kv.put(key, value);
  state.written = { text, atMs: nowMs };
}

/**
 * Keep every record the bucket holds, then every change; a watch that ends is restarted by a pass. The peers are
 * ready once the records stored when the watch started are in (the first update: the last of them, or a new write).
 */
function watch(state: SummariesState, kv: KV): void {
  state.watching = kv;
  state.ready = false;
  const run = async (): Promise<void> => {
    // unknown (the status failed): ready at the first update, as when some are stored (this member's own write is one)
    const stored = await kv.status().then(
      (status) => status.values,
      () => Number.NaN,
    );
    const entries = await kv.watch({ key: `${KEY_PREFIX}*` });
    state.stopWatch = () => entries.stop();
    if (stored === 0) state.ready = true;
    for await (const entry of entries) {
      if (state.watching !== kv) break;
      const memberId = entry.key.slice(KEY_PREFIX.length);
      const record = recordOf(entry);
      if (record === null || record.memberId !== memberId) state.records.delete(memberId);
      else state.records.set(memberId, { record, storedAtMs: entry.created.getTime(), goneSinceMs: null });
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
      if (state.watching === kv) state.watching = undefined;
    });
}

/** A stored entry as a record; null for a delete or a malformed one. */
function recordOf(entry: KvEntry): CauseRecord | null {
  if (entry.operation !== "PUT") return null;
  let value: unknown;
  try {
    value = JSON.parse(entry.string()) as unknown;
  } catch {
    return null;
  }
  const parsed = CAUSE_RECORD.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** Hand the runner the live peers' records (this member's own part is its engine) and the causes firing in the log. */
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
  runner.clusterCauses(mergePeerCauses(livePeers(state)), firing, state.ready);
}

/** The peers' records that count (see countingSummaries), forgetting those that never will again. */
function livePeers(state: Pick<SummariesState, "deps" | "records">): CauseSummary[] {
  const { deps, records } = state;
  const nowMs = deps.nowMs();
  const live = new Map(deps.member.status().members.map((view) => [view.memberId, view.incarnation]));
  const counting = countingSummaries(records, live, deps.memberId, nowMs);
  for (const [memberId, held] of records)
    if (!live.has(memberId) && nowMs - (held.goneSinceMs ?? nowMs) > DEAD_HOLD_MS) records.delete(memberId);
  return counting;
}

/**
 * The summaries of the members other than `selfId` that count at `nowMs`, the live ones first (a newer state of a
 * target wins), each in member id order: a live member's (of the incarnation `live` holds a lease for) stored within
 * STALE_MS; a member's that left `live` (marked gone now, the first time) for DEAD_HOLD_MS after it left, when its
 * record was fresh then. An earlier process's record of a live member id does not count.
 */
export function countingSummaries(
  records: ReadonlyMap<string, HeldRecord>,
  live: ReadonlyMap<string, string>,
  selfId: string,
  nowMs: number,
): CauseSummary[] {
  const alive: CauseRecord[] = [];
  const gone: CauseRecord[] = [];
  for (const held of records.values()) {
    const { record, storedAtMs } = held;
    if (record.memberId === selfId) continue;
    const incarnation = live.get(record.memberId);
    held.goneSinceMs = incarnation === undefined ? (held.goneSinceMs ?? nowMs) : null;
    if (incarnation === record.incarnation) {
      if (nowMs - storedAtMs <= STALE_MS) alive.push(record);
    } else if (held.goneSinceMs !== null && held.goneSinceMs - storedAtMs <= STALE_MS)
      if (nowMs - held.goneSinceMs <= DEAD_HOLD_MS) gone.push(record);
  }
  const byId = (a: CauseRecord, b: CauseRecord): number => (a.memberId < b.memberId ? -1 : 1);
  return [...alive.sort(byId), ...gone.sort(byId)].map((record) => record.summary);
}
