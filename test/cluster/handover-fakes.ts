// In-memory stand-ins for the alert handover's unit tests: a KV bucket with compare-and-set, a member that owns what it is told.
import type { AlertBucket } from "../../src/cluster/alert-bucket.js";
import type { ClusterMember } from "../../src/cluster/member.js";

/** An in-memory alert bucket with compare-and-set on revisions, as the KV bucket has. */
export function memoryBucket(): AlertBucket & {
  readonly records: Map<string, { text: string; revision: number }>;
} {
  const records = new Map<string, { text: string; revision: number }>();
  let revision = 0;
  return {
    records,
    read: (key) => {
      const record = records.get(key);
      return Promise.resolve({ text: record?.text ?? null, revision: record?.revision ?? 0 });
    },
    write: (key, text, expected) => {
      if ((records.get(key)?.revision ?? 0) !== expected) return Promise.resolve(null);
      revision += 1;
      records.set(key, { text, revision });
      return Promise.resolve(revision);
    },
  };
}

/** A member with a valid lease over `bucket`, owning the keys `owned()` gives (asked each time). */
export function owningMember(bucket: AlertBucket, owned: () => readonly string[]): ClusterMember {
  // not a literal in place: newer members report more (standby), which this fake need not name
  const status = {
    memberId: "m2",
    leaseRevision: 7,
    leaseExpiresAtMs: 0,
    members: [],
    ownedKeys: 1,
    pendingKeys: 0,
    standby: false,
    error: null,
  };
  return {
    start: () => undefined,
    stop: () => Promise.resolve(),
    leaseValid: () => true,
    owns: (key) => owned().includes(key),
    ownedKeys: () => new Set(owned()),
    alertBucket: () => bucket,
    sharedBuckets: () => undefined,
    status: () => status,
    refresh: () => undefined,
  };
}
