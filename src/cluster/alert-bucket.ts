// Alert state per ownership key in a NATS JetStream key-value bucket, written by compare-and-set on the record's revision.
import type { KV } from "@nats-io/kv";

/** The bucket holding each ownership key's alert checkpoint (keys `alerts.<base64url of the ownership key>`). */
export const ALERTS_BUCKET = "pm_cluster_alerts";

/** A key's record as read: its JSON text (null when none was ever written) and the revision to write over. */
export interface AlertRecordRead {
  readonly text: string | null;
  /** 0 when the key has no record (the next write creates it). */
  readonly revision: number;
}

/** The alert-state bucket: read a key's record, write one by compare-and-set. */
export interface AlertBucket {
  read(ownershipKey: string): Promise<AlertRecordRead>;
  /** Write over `revision` (0: create); the new revision, or null when another member wrote since (the key moved on). */
  write(ownershipKey: string, text: string, revision: number): Promise<number | null>;
}

const ENCODER = new TextEncoder();

/** The KV key of an ownership key (`pair:BTC/USD` has characters a KV key does not allow). */
export function alertKeyOf(ownershipKey: string): string {
  return `alerts.${Buffer.from(ownershipKey, "utf8").toString("base64url")}`;
}

/** The bucket's operations over an open KV; `casOrNull` turns a lost compare-and-set into null. */
export function alertBucketOver(
  kv: KV,
  timeoutMs: number,
  casOrNull: (write: () => Promise<number>) => Promise<number | null>,
): AlertBucket {
  return {
    async read(ownershipKey) {
      const entry = await kv.get(alertKeyOf(ownershipKey));
      if (entry === null) return { text: null, revision: 0 };
      return { text: entry.operation === "PUT" ? entry.string() : null, revision: entry.revision };
    },
    write(ownershipKey, text, revision) {
      const key = alertKeyOf(ownershipKey);
      const value = ENCODER.encode(text);
      return casOrNull(() =>
        revision === 0 ? kv.create(key, value) : kv.update(key, value, revision, timeoutMs),
      );
    },
  };
}
