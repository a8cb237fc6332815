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
import { CAUSES_TTL_MS } from "./shared-buckets.js";

/** A member rewrites its unchanged summary this often, well within the bucket's max age. */
const REFRESH_MS = CAUSES_TTL_MS / 4;
/** A summary larger than this is not written (a KV value is at most 1 MiB): the others judge without it. */
const MAX_RECORD_BYTES = 512 * 1024;

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
    judged: z.record(z.string(), z.number().int().nonnegative()),
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
  readonly records: Map<string, CauseRecord>;
  watching: KV | undefined;
  /** The text last written (null: none written by this process), and when. */
  written: { readonly text: string | null; readonly atMs: number };
  writing: boolean;
  /** Whether the last write (or watch) failed: logged once per streak. */
  failed: boolean;
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
    written: { text: null, atMs: 0 },
    writing: false,
    failed: false,
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
    state.failed = false;
  } catch (error) {
    if (!state.failed)
      state.deps.logger.error(
        { err: error },
        "cluster_error: cannot write the cause summary to NATS (retrying)",
      );
    state.failed = true;
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
    if (text !== state.written.text)
      deps.logger.error(
        { bytes: value.byteLength },
        "cluster: the cause summary is too large to share (not written)",
      );
    state.written = { text, atMs: nowMs };
    return;
  }
  await kv.put(key, value);
  state.written = { text, atMs: nowMs };
}

/** Keep every record the bucket holds, then every change; a watch that ends is restarted by a pass. */
function watch(state: SummariesState, kv: KV): void {
  state.watching = kv;
  const run = async (): Promise<void> => {
    const entries = await kv.watch({ key: `${KEY_PREFIX}*` });
    for await (const entry of entries) {
      if (state.watching !== kv) break;
      const memberId = entry.key.slice(KEY_PREFIX.length);
      const record = recordOf(entry);
      if (record === null || record.memberId !== memberId) state.records.delete(memberId);
      else state.records.set(memberId, record);
      apply(state);
    }
  };
  run()
    .catch((error: unknown) => {
      if (!state.failed)
        state.deps.logger.warn(
          { err: error },
          "cluster: watching the cause summaries in NATS failed, re-watching",
        );
      state.failed = true;
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
  runner.clusterCauses(mergePeerCauses(livePeers(state)), firing);
}

/** The other live members' records (their lease as this member sees it, this very process), forgetting long-gone ones. */
function livePeers(state: Pick<SummariesState, "deps" | "records">): CauseSummary[] {
  const { deps, records } = state;
  const nowMs = deps.nowMs();
  const live = new Map(deps.member.status().members.map((view) => [view.memberId, view.incarnation]));
  // records nobody rewrote for the bucket's max age are gone from NATS: forget those of members no longer live
  for (const [memberId, record] of records)
    if (!live.has(memberId) && nowMs - record.atMs > CAUSES_TTL_MS) records.delete(memberId);
  return livePeerSummaries(records.values(), live, deps.memberId);
}

/**
 * The summaries of the members other than `selfId` whose record is that of the incarnation `live` holds a lease for
 * (a dead member's, or an earlier process's of a live id, does not count), in member id order.
 */
export function livePeerSummaries(
  records: Iterable<CauseRecord>,
  live: ReadonlyMap<string, string>,
  selfId: string,
): CauseSummary[] {
  return [...records]
    .filter((record) => record.memberId !== selfId && live.get(record.memberId) === record.incarnation)
    .sort((a, b) => (a.memberId < b.memberId ? -1 : 1))
    .map((record) => record.summary);
}
