// A cluster member in the real-process suites: its config (off-chain pairs only, no warm-up, its own state dir) and its start.
import { startDaemon, type RunningDaemon } from "../e2e/daemon.js";
import { makeWorkDir, writeConfig, type WorkDir } from "../e2e/fixtures.js";
import { startCountingProxy, type CountingProxy } from "./proxy.js";

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
  /** `cluster.historyCheckpointMs` (default: the schema's). */
  readonly historyCheckpointMs?: number;
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
      ...(member.historyCheckpointMs === undefined
        ? {}
        : { historyCheckpointMs: member.historyCheckpointMs }),
      experimental: true,
    },
    shutdown: { drainTimeoutMs: 2_000 },
  };
}

/** A member started as a built daemon behind a counting proxy of its own (which shows what it polls). */
export interface StartedMember {
  readonly id: string;
  readonly proxy: CountingProxy;
  readonly daemon: RunningDaemon;
  readonly work: WorkDir;
}

/**
 * Start member `options.id` on a fresh work dir, polling `simulatorUrl` through a new counting proxy (which applies
 * `rewrite` to pair prices); the proxy is pushed to `proxies` so the suite closes it.
 */
export async function startClusterMember(
  simulatorUrl: string,
  proxies: CountingProxy[],
  options: Omit<MemberOptions, "upstreamUrl">,
  rewrite?: (pair: string, body: Buffer) => Buffer,
): Promise<StartedMember> {
  const proxy = await startCountingProxy(simulatorUrl, rewrite);
  proxies.push(proxy);
  const work = makeWorkDir();
  writeConfig(work, memberConfig(work, { ...options, upstreamUrl: proxy.url }));
  const daemon = await startDaemon(work.configFile, {
    cwd: work.dir,
    simulatorUrl: proxy.url,
    timeoutMs: 30_000,
  });
  return { id: options.id, proxy, daemon, work };
}
