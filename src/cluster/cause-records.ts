// The members' cause records as a member holds them from the NATS KV watch: their shape, which of them count (live or
// lately gone, fresh, written under the same cause configuration), and the NATS server's clock read as this member's.
import type { KvEntry } from "@nats-io/kv";
import { z } from "zod";
import type { CauseSummary } from "../domain/cause-summary.js";
import { RULE_KINDS } from "../domain/events.js";

/** A member rewrites its unchanged summary this often, well within the bucket's max age. */
export const REFRESH_MS = 15_000;
/** A record stored longer ago than this no longer counts (its member cannot write, or the bucket lost it). */
export const STALE_MS = 2 * REFRESH_MS;
/**
 * A member that left the view (kill -9) counts with its last record this long after: its targets come back only
 * once the others adopted and polled them (a peer's or this engine's newer state of a target wins).
 */
export const DEAD_HOLD_MS = 60_000;
/**
 * A judging member steps no parent for at most this long while some peer's record is left out for its configuration
 * hash (a rolling reload or upgrade takes less); then it judges without it.
 */
export const MISMATCH_HOLD_MS = 60_000;
/** The offset of the server's clock is the smallest of this many samples (the latest writes'). */
export const OFFSET_SAMPLES = 4;
/** An own record delivered later than this after its write is no sample (a watch restarted, delivering it again). */
export const OFFSET_SAMPLE_MAX_DELAY_MS = 2_000;

/** A member's record: who wrote it (the process), when (its clock), under which cause configuration, and what. */
export interface CauseRecord {
  readonly memberId: string;
  readonly incarnation: string;
  readonly atMs: number;
  /** causeConfigHash of the writer's rules; absent in a record of an older version (which then does not count). */
  readonly configHash?: string | undefined;
  readonly summary: CauseSummary;
}

/** A record as this member holds it: when NATS stored it (the server's clock), and since when its member is gone. */
export interface HeldRecord {
  readonly record: CauseRecord;
  readonly createdMs: number;
  goneSinceMs: number | null;
}

const CAUSE_RECORD = z.object({
  memberId: z.string(),
  incarnation: z.string(),
  atMs: z.number(),
  configHash: z.string().optional(),
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

/** A stored entry as a record; null for a delete or a malformed one. */
export function recordOf(entry: Pick<KvEntry, "operation" | "string">): CauseRecord | null {
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

/** What decides which records count for a member at a moment. */
export interface CountingView {
  /** The live members: member id → the incarnation holding its lease. */
  readonly live: ReadonlyMap<string, string>;
  readonly selfId: string;
  readonly nowMs: number;
  /** This member's causeConfigHash: another member's record counts only under the same. */
  readonly configHash: string;
  /** This member's clock minus the NATS server's (serverOffsetMs): a record's server time plus it is this member's. */
  readonly offsetMs: number;
}

/** The records that count, and the members whose record would count but for its configuration hash. */
export interface Counting {
  readonly records: readonly CauseRecord[];
  /** By member id: the hash its record carries (null: none, a record of an older version). */
  readonly mismatched: ReadonlyMap<string, string | null>;
}

/**
 * The records of the members other than `selfId` that count, the live ones first (a newer state of a target wins),
 * each in member id order: a live member's (of the incarnation `live` holds a lease for) stored within STALE_MS; a
 * member's that left `live` (marked gone now, the first time) for DEAD_HOLD_MS after it left, when its record was
 * fresh then; either only under this member's configuration hash. An earlier process's record of a live member id
 * does not count. Stored times are the server's, read on this member's clock (`offsetMs`).
 */
export function countingRecords(records: ReadonlyMap<string, HeldRecord>, view: CountingView): Counting {
  const { live, selfId, nowMs } = view;
  const alive: CauseRecord[] = [];
  const gone: CauseRecord[] = [];
  const mismatched = new Map<string, string | null>();
  for (const held of records.values()) {
    const { record } = held;
    if (record.memberId === selfId) continue;
    const storedAtMs = held.createdMs + view.offsetMs;
    const incarnation = live.get(record.memberId);
    held.goneSinceMs = incarnation === undefined ? (held.goneSinceMs ?? nowMs) : null;
    const alike = incarnation === record.incarnation;
    const counts = alike
      ? nowMs - storedAtMs <= STALE_MS
      : held.goneSinceMs !== null &&
        held.goneSinceMs - storedAtMs <= STALE_MS &&
        nowMs - held.goneSinceMs <= DEAD_HOLD_MS;
    if (!counts) continue;
    if (record.configHash !== view.configHash) mismatched.set(record.memberId, record.configHash ?? null);
    else (alike ? alive : gone).push(record);
  }
  const byId = (a: CauseRecord, b: CauseRecord): number => (a.memberId < b.memberId ? -1 : 1);
  return { records: [...alive.sort(byId), ...gone.sort(byId)], mismatched };
}

/**
 * A sample of this member's clock minus the server's from one of its own records as the watch delivered it: the
 * time it arrived minus the time NATS stored it (the delivery delay adds a little); null when it arrived more than
 * OFFSET_SAMPLE_MAX_DELAY_MS after its write (`atMs`, this member's clock): a record delivered again, not just stored.
 */
export function offsetSample(atMs: number, createdMs: number, receivedAtMs: number): number | null {
  return receivedAtMs - atMs > OFFSET_SAMPLE_MAX_DELAY_MS ? null : receivedAtMs - createdMs;
}

/** Two samples in a row this far above the smallest mean the offset grew (a clock stepped, another server leads). */
export const OFFSET_JUMP_MS = 1_000;

/**
 * The latest OFFSET_SAMPLES samples, with `sample`; after two in a row more than OFFSET_JUMP_MS above the smallest,
 * only those two (the smallest follows a fall at once, and a rise within two samples rather than OFFSET_SAMPLES).
 */
export function withOffsetSample(samples: readonly number[], sample: number): readonly number[] {
  const last = samples.at(-1);
  const smallest = serverOffsetMs(samples);
  if (last !== undefined && last - smallest > OFFSET_JUMP_MS && sample - smallest > OFFSET_JUMP_MS)
    return [last, sample];
  return [...samples, sample].slice(-OFFSET_SAMPLES);
}

/**
 * This member's clock minus the server's: the smallest recent sample (each is the offset plus its delivery delay),
 * 0 before the first (the server's clock taken for this member's, as if they agreed).
 */
export function serverOffsetMs(samples: readonly number[]): number {
  return samples.length === 0 ? 0 : Math.min(...samples);
}
