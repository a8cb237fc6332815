// The config of a cluster member in the real-process suites: off-chain pairs only, no warm-up, its own state dir.
import type { WorkDir } from "../e2e/fixtures.js";

/** What differs between the suites' members. */
export interface MemberOptions {
  readonly id: string;
  readonly upstreamUrl: string;
  readonly natsUrls: readonly string[];
  readonly pairs: readonly string[];
  readonly periodMs: number;
  readonly leaseMs: number;
  readonly rules: readonly unknown[];
  readonly sinks?: readonly unknown[];
}

/** Member `id` polling `pairs` from `upstreamUrl` (one attempt a poll), in the cluster on `natsUrls` (experimental). */
export function memberConfig(work: WorkDir, member: MemberOptions): Record<string, unknown> {
  return {
    upstream: { url: member.upstreamUrl, retry: { maxAttempts: 1 } },
    monitors: {
      offchain: member.pairs.map((pair) => ({ pair, periodMs: member.periodMs })),
      onchain: [],
      publishers: [],
      funding: [],
      vaults: [],
      warmup: { enabled: false },
    },
    rules: member.rules,
    sinks: member.sinks ?? [],
    state: { dir: work.stateDir },
    cluster: {
      nats: { servers: member.natsUrls },
      memberId: member.id,
      leaseMs: member.leaseMs,
      experimental: true,
    },
    shutdown: { drainTimeoutMs: 2_000 },
  };
}
