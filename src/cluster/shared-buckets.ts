// The key-value buckets the members share besides leases and alert state: silences, once-only claims, the config
// generation, the members' cause summaries.
import type { KV, Kvm } from "@nats-io/kv";

/** Silences (keys `silence.<base64url of the id>`, the silence as JSON). */
export const SILENCES_BUCKET = "pm_cluster_silences";
/** Once-only claims (`claim.<what>`, created by compare-and-set: the member whose create succeeds acts); kept a day. */
export const CLAIMS_BUCKET = "pm_cluster_claims";
/** The cluster's config generation (one key, `generation`). */
export const CONFIG_BUCKET = "pm_cluster_config";

/** Each member's cause summary (key `causes.<memberId>`, src/cluster/cause-summaries.ts). */
export const CAUSES_BUCKET = "pm_cluster_causes";
/** How long a cause summary nobody rewrote is kept (the bucket's max age): a member rewrites its own well within it. */
export const CAUSES_TTL_MS = 10 * 60_000;

/** How long a claim is remembered (the bucket's max age): far longer than any member's pause. */
export const CLAIM_TTL_MS = 24 * 3_600_000;

/** The shared buckets, open on the member's connection. */
export interface SharedBuckets {
  readonly silences: KV;
  readonly claims: KV;
  readonly config: KV;
  readonly causes: KV;
}

/** Open (or create) the shared buckets with the members' bucket settings. */
export async function openSharedBuckets(
  kvm: Kvm,
  bucket: { readonly history: number; readonly replicas: number; readonly timeout: number },
): Promise<SharedBuckets> {
  const [silences, claims, config, causes] = await Promise.all([
    kvm.create(SILENCES_BUCKET, bucket),
    kvm.create(CLAIMS_BUCKET, { ...bucket, ttl: CLAIM_TTL_MS }),
    kvm.create(CONFIG_BUCKET, bucket),
    kvm.create(CAUSES_BUCKET, { ...bucket, ttl: CAUSES_TTL_MS }),
  ]);
  return { silences, claims, config, causes };
}

/** A compare-and-set whose loss (the server's "wrong last sequence", or "key exists") is null, not an error. */
export async function casOrNull(write: () => Promise<number>): Promise<number | null> {
  try {
    return await write();
  } catch (error) {
    const message = error instanceof Error ? error.message : "";
    if (/wrong last sequence|key exists/i.test(message)) return null;
    throw error;
  }
}
