// Member leases in a NATS JetStream key-value bucket: one record per member, renewed by compare-and-set on its revision.
import { Kvm, type KV, type KvEntry } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { z } from "zod";
import type { ClusterConfig } from "../config/types.js";
import { ALERTS_BUCKET, alertBucketOver, type AlertBucket } from "./alert-bucket.js";
import { natsConnectOptions } from "./nats-connect.js";
import { casOrNull, openSharedBuckets, type SharedBuckets } from "./shared-buckets.js";

/** The bucket holding the members' lease records (keys `member.<memberId>`). */
export const MEMBERS_BUCKET = "pm_cluster_members";

/** A member's lease as stored: who, which process, and until when (ms since epoch, the writer's clock). */
export interface LeaseRecord {
  readonly memberId: string;
  /** Random per process: a restarted member with the same id is a new incarnation. */
  readonly incarnation: string;
  readonly expiresAtMs: number;
  /** The ownership keys it owned and how many targets they hold, at its last renewal (for /api/v1/status). */
  readonly keys?: readonly string[] | undefined;
  readonly targets?: number | undefined;
  /**
   * A member that has not yet confirmed its view of the membership (starting, or its watch lags): it holds its
   * record but is no member for the rendezvous, so nobody hands it keys it could not yet poll safely.
   */
  readonly standby?: boolean | undefined;
}

/** A lease record with the KV revision it was read at (the compare-and-set token). */
export interface StoredLease extends LeaseRecord {
  readonly revision: number;
}

const leaseRecordSchema = z.object({
  memberId: z.string(),
  incarnation: z.string(),
  expiresAtMs: z.number(),
  keys: z.array(z.string()).optional(),
  targets: z.number().int().nonnegative().optional(),
  standby: z.boolean().optional(),
});

/** A member's record as a watch delivers it: the record, or null when it was deleted (or is malformed). */
export interface LeaseChange {
  readonly memberId: string;
  readonly lease: StoredLease | null;
}

/** A running watch of the lease records: `ended` settles when it stops (stopped, or NATS ended it). */
export interface LeaseWatch {
  stop(): void;
  readonly ended: Promise<void>;
}

/** The lease bucket (and the alert-state bucket) over one NATS connection (which reconnects by itself). */
export interface LeaseStore {
  /** Each ownership key's alert state (cluster handover). */
  readonly alerts: AlertBucket;
  /** Silences, once-only claims and the config generation. */
  readonly shared: SharedBuckets;
  /** Write a new record for a member with no live record; returns its revision, or null when a record exists. */
  create(lease: LeaseRecord): Promise<number | null>;
  /** Renew the record at `revision`; returns the new revision, or null when the record moved on (lease lost). */
  renew(lease: LeaseRecord, revision: number): Promise<number | null>;
  /** Every member's current record (malformed ones skipped). */
  list(): Promise<readonly StoredLease[]>;
  /**
   * Tell `onChange` every record as it is now, then every change, in the bucket's order (so a record seen at
   * revision R comes after every write the server took before it).
   */
  watch(onChange: (change: LeaseChange) => void): Promise<LeaseWatch>;
  /** Delete an expired record, unless it was renewed since `revision` (compare-and-set); false when it was. */
  remove(memberId: string, revision: number): Promise<boolean>;
  close(): Promise<void>;
}

const ENCODER = new TextEncoder();
const KEY_PREFIX = "member.";
const keyOf = (memberId: string): string => `${KEY_PREFIX}${memberId}`;

/** Connect to NATS and open (or create) the lease bucket; throws when NATS cannot be reached within `timeoutMs`. */
export async function openLeaseStore(
  nats: ClusterConfig["nats"],
  options: { readonly name: string; readonly timeoutMs: number },
): Promise<LeaseStore> {
  const nc = await connect(natsConnectOptions(nats, options.name, options.timeoutMs));
  try {
    const kvm = new Kvm(nc);
    const bucket = { history: 1, replicas: nats.replicas, timeout: options.timeoutMs };
    const kv = await kvm.create(MEMBERS_BUCKET, bucket);
    const alerts = alertBucketOver(await kvm.create(ALERTS_BUCKET, bucket), options.timeoutMs, casOrNull);
    const shared = await openSharedBuckets(kvm, bucket);
    return leaseStoreOver(nc, kv, { alerts, shared }, options.timeoutMs);
  } catch (error) {
    await nc.close();
    throw error;
  }
}

/** The store's operations over an open bucket. */
function leaseStoreOver(
  nc: NatsConnection,
  kv: KV,
  buckets: { readonly alerts: AlertBucket; readonly shared: SharedBuckets },
  timeoutMs: number,
): LeaseStore {
  const encode = (lease: LeaseRecord): Uint8Array => ENCODER.encode(JSON.stringify(lease));
  return {
    ...buckets,
    async create(lease) {
      return casOrNull(() => kv.create(keyOf(lease.memberId), encode(lease)));
    },
    async renew(lease, revision) {
      return casOrNull(() => kv.update(keyOf(lease.memberId), encode(lease), revision, timeoutMs));
    },
    async list() {
      const keys: string[] = [];
      for await (const key of await kv.keys("member.*")) keys.push(key);
      const entries = await Promise.all(keys.map((key) => kv.get(key)));
      return entries.flatMap((entry) => {
        const lease = entry === null ? null : storedLeaseOf(entry);
        return lease === null ? [] : [lease];
      });
    },
    async watch(onChange) {
      const entries = await kv.watch({ key: "member.*" });
      const ended = (async () => {
        for await (const entry of entries)
          onChange({ memberId: entry.key.slice(KEY_PREFIX.length), lease: storedLeaseOf(entry) });
      })();
      return { stop: () => entries.stop(), ended };
    },
    async remove(memberId, revision) {
      const done = await casOrNull(async () => {
        await kv.delete(keyOf(memberId), { previousSeq: revision });
        return revision;
      });
      return done !== null;
    },
    async close() {
      await nc.close();
    },
  };
}

/** A stored entry as a lease with its revision; null for a delete or a malformed record. */
function storedLeaseOf(entry: KvEntry): StoredLease | null {
  if (entry.operation !== "PUT") return null;
  const parsed = leaseRecordSchema.safeParse(safeJson(entry.string()));
  return parsed.success ? { ...parsed.data, revision: entry.revision } : null;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
