// Cluster bench: 3 shipped members on a bench-owned nats-server share N targets at 1 s; each member's CPU vs one daemon polling all N, and failover time over repeated kill -9s.
import { offchainMonitors } from "./lib/config.js";
import { natsServerInstalled, startBenchNats, type BenchNats } from "./lib/nats-server.js";
import { syntheticPairIds } from "./lib/pairs.js";
import { atMost, printResult, type BenchResult } from "./lib/result.js";
import {
  cpuMsOf,
  scrapeMetric,
  startShippedDaemon,
  startSimulatorCli,
  waitWarmedUp,
  type ShippedProcess,
} from "./lib/shipped.js";
import { median, sleep } from "./lib/stats.js";
import { alternate, measureWindow, perS } from "./lib/window.js";
import { daemonPollCounter } from "./polling-bench.js";

/** Settings of one run. */
export interface ClusterBenchOptions {
  readonly targets: number;
  readonly members: number;
  readonly warmupS: number;
  readonly measureS: number;
  readonly rounds: number;
  readonly kills: number;
}

const PERIOD_MS = 1_000;
/** The shipped default of `cluster.leaseMs`. */
const LEASE_MS = 10_000;
/** How often the failover watcher scrapes the survivors (the resolution of a failover time). */
const WATCH_MS = 250;

/** A running member: its process and its member id. */
interface Member {
  readonly id: string;
  readonly process: ShippedProcess;
}

/** The user config every poller gets: N off-chain targets at 1 s on the simulator, shipped rules. */
function pollerConfig(simUrl: string, targets: number): Record<string, unknown> {
  return {
    upstream: { url: simUrl },
    monitors: { offchain: offchainMonitors(syntheticPairIds(targets), targets, PERIOD_MS) },
  };
}

/** The config of daemon `i` of `n` polling the i-th `n`th of the N targets (the control phase, no cluster). */
function partConfig(simUrl: string, targets: number, i: number, n: number): Record<string, unknown> {
  const all = offchainMonitors(syntheticPairIds(targets), targets, PERIOD_MS);
  const size = Math.ceil(targets / n);
  return { upstream: { url: simUrl }, monitors: { offchain: all.slice(i * size, (i + 1) * size) } };
}

/** Start member `id` as shipped (`pragma-monitor run`), in the cluster on `nats`; resolves once it listens. */
async function startMember(simUrl: string, nats: BenchNats, id: string, targets: number): Promise<Member> {
  const cluster = { nats: { servers: [nats.url] }, memberId: id, leaseMs: LEASE_MS, experimental: true };
  const process = await startShippedDaemon({ ...pollerConfig(simUrl, targets), cluster }, "/healthz");
  return { id, process };
}

/** Per member: [targets owned, polls per s over `sampleMs`]. */
async function ownedAndPolling(members: readonly Member[], sampleMs: number): Promise<[number, number][]> {
  const scrape = (name: string): Promise<number[]> =>
    Promise.all(members.map((m) => scrapeMetric(m.process.url, name).catch(() => Number.NaN)));
  const polls0 = await scrape("pragma_monitor_polls_total");
  await sleep(sampleMs);
  const polls1 = await scrape("pragma_monitor_polls_total");
  const owned = await scrape("pragma_monitor_cluster_owned_targets");
  return owned.map((n, i) => [n, perS(polls1[i]! - polls0[i]!, sampleMs)]);
}

/**
 * Resolve once the members own all `targets` between them, each at least half its fair share, and each polls what
 * it owns (≥ 0.9 polls per owned target per s: a joining member polls only after its handover wait).
 */
async function waitBalanced(members: readonly Member[], targets: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen: [number, number][] = [];
  while (Date.now() < deadline) {
    seen = await ownedAndPolling(members, 3_000);
    const fair = targets / members.length;
    const owned = seen.reduce((sum, [n]) => sum + n, 0);
    if (owned === targets && seen.every(([n, rate]) => n >= fair / 2 && rate >= 0.9 * n)) {
      // adopted targets warm up after they start polling: wait for that too, so a window sees steady polling
      for (const m of members) await waitWarmedUp(m.process.url, timeoutMs);
      return;
    }
  }
  const state = seen.map(([n, rate]) => `${n} owned/${rate.toFixed(0)} polls/s`).join(", ");
  throw new Error(`cluster not balanced and polling after ${timeoutMs} ms: ${state} (${targets} targets)`);
}

/** Each target's latest successful poll at member `url` (ms since epoch) when at or after `sinceMs`. */
async function polledSince(url: string, sinceMs: number): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out = new Map<string, number>();
  const prefix = 'pragma_monitor_target_last_success_timestamp_seconds{target="';
  for (const line of text.split("\n")) {
    if (!line.startsWith(prefix)) continue;
    const atMs = Number(line.slice(line.lastIndexOf(" ") + 1)) * 1000;
    if (atMs >= sinceMs) out.set(line.slice(prefix.length, line.indexOf('"', prefix.length)), atMs);
  }
  return out;
}

/** CPU (ms per s) of each member over one window after `warmupS`, and the polls per s they made together. */
async function measureMembers(
  members: readonly Member[],
  warmupS: number,
  measureS: number,
): Promise<{ cpuPerS: number[]; pollsPerS: number }> {
  await sleep(warmupS * 1000);
  const polls = (): Promise<number> =>
    Promise.all(members.map((m) => scrapeMetric(m.process.url, "pragma_monitor_polls_total"))).then((n) =>
      n.reduce((a, b) => a + b, 0),
    );
  const polls0 = await polls();
  const cpu0 = members.map((m) => cpuMsOf(m.process.pid));
  const t0 = performance.now();
  await sleep(measureS * 1000);
  const cpu1 = members.map((m) => cpuMsOf(m.process.pid));
  const windowMs = performance.now() - t0;
  const polls1 = await polls();
  return {
    cpuPerS: cpu1.map((c, i) => perS(c - cpu0[i]!, windowMs)),
    pollsPerS: perS(polls1 - polls0, windowMs),
  };
}

/** One CPU round of the whole cluster: start the members, wait for balance, measure, stop them. */
async function clusterRound(
  simUrl: string,
  nats: BenchNats,
  options: ClusterBenchOptions,
  round: number,
): Promise<{ cpuPerS: number[]; pollsPerS: number }> {
  const members: Member[] = [];
  try {
    for (let i = 1; i <= options.members; i++)
      members.push(await startMember(simUrl, nats, `r${round}m${i}`, options.targets));
    await waitBalanced(members, options.targets, 300_000);
    return await measureMembers(members, options.warmupS, options.measureS);
  } finally {
    await Promise.all(members.map((m) => m.process.stop()));
  }
}

/**
 * The control: as many plain daemons as members (no cluster, no NATS), each polling its share of the targets, side by
 * side on the same simulator: what a third of the polling costs with the same number of processes sharing the cores.
 */
async function partsRound(simUrl: string, options: ClusterBenchOptions): Promise<{ cpuPerS: number[] }> {
  const daemons: ShippedProcess[] = [];
  try {
    for (let i = 0; i < options.members; i++)
      daemons.push(await startShippedDaemon(partConfig(simUrl, options.targets, i, options.members)));
    await sleep(options.warmupS * 1000);
    const cpu0 = daemons.map((d) => cpuMsOf(d.pid));
    const t0 = performance.now();
    await sleep(options.measureS * 1000);
    const cpu1 = daemons.map((d) => cpuMsOf(d.pid));
    const windowMs = performance.now() - t0;
    return { cpuPerS: cpu1.map((c, i) => perS(c - cpu0[i]!, windowMs)) };
  } finally {
    await Promise.all(daemons.map((d) => d.stop()));
  }
}

/** One daemon polling all targets (no cluster): CPU per s and polls per s over one window. */
async function singleRound(
  simUrl: string,
  options: ClusterBenchOptions,
): Promise<{ cpuPerS: number; pollsPerS: number }> {
  const daemon = await startShippedDaemon(pollerConfig(simUrl, options.targets));
  try {
    const r = await measureWindow(
      daemon.pid,
      daemon.pid,
      daemonPollCounter(daemon.url),
      options.warmupS,
      options.measureS,
    );
    return { cpuPerS: perS(r.cpuMs, r.windowMs), pollsPerS: perS(r.count, r.windowMs) };
  } finally {
    await daemon.stop();
  }
}

/**
 * kill -9 one member: ms from the kill to the poll that made the last of its targets polled again by a survivor
 * (capped at `capMs`). Each target's first poll after the kill is read from its own timestamp: the scrape's interval
 * and latency (up to 0.9 s measured on a loaded machine) are the watcher's, not the failover's. A target seen only
 * at a later poll (scrapes further apart than its period) counts that later poll: never less than the truth.
 */
async function killAndWatch(victim: Member, survivors: readonly Member[], capMs: number): Promise<number> {
  const lost = [...(await polledSince(victim.process.url, Date.now() - 3_000)).keys()];
  if (lost.length === 0) throw new Error(`member ${victim.id} polled nothing in the 3 s before its kill`);
  victim.process.child.kill("SIGKILL");
  const killedAtMs = Date.now();
  const firstPollMs = new Map<string, number>();
  while (Date.now() - killedAtMs < capMs) {
    await sleep(WATCH_MS);
    const seen = await Promise.all(survivors.map((m) => polledSince(m.process.url, killedAtMs)));
    for (const target of lost)
      for (const polled of seen) {
        const atMs = polled.get(target);
        if (atMs !== undefined) firstPollMs.set(target, Math.min(firstPollMs.get(target) ?? atMs, atMs));
      }
    if (firstPollMs.size === lost.length) return Math.max(...firstPollMs.values()) - killedAtMs;
  }
  return capMs;
}

/** `kills` rounds of kill -9 → failover → replacement member (a new id) → balance; the failover times in ms. */
async function failovers(simUrl: string, nats: BenchNats, options: ClusterBenchOptions): Promise<number[]> {
  const members: Member[] = [];
  const times: number[] = [];
  try {
    for (let i = 1; i <= options.members; i++)
      members.push(await startMember(simUrl, nats, `f${i}`, options.targets));
    await waitBalanced(members, options.targets, 300_000);
    for (let k = 0; k < options.kills; k++) {
      const [victim] = members.splice(k % members.length, 1);
      times.push(await killAndWatch(victim!, members, 3 * (LEASE_MS + PERIOD_MS)));
      await victim!.process.stop();
      members.splice(
        k % (members.length + 1),
        0,
        await startMember(simUrl, nats, `f${options.members + k + 1}`, options.targets),
      );
      await waitBalanced(members, options.targets, 300_000);
    }
    return times;
  } finally {
    await Promise.all(members.map((m) => m.process.stop()));
  }
}

/** The whole bench against one simulator and one bench-owned nats-server. */
export async function runClusterBench(options: ClusterBenchOptions): Promise<BenchResult> {
  if (!natsServerInstalled())
    throw new Error("the cluster bench needs nats-server on PATH (Debian: apt-get install -y nats-server)");
  const sim = await startSimulatorCli(options.targets);
  const nats = await startBenchNats();
  const single: { cpuPerS: number; pollsPerS: number }[] = [];
  const cluster: { cpuPerS: number[]; pollsPerS: number }[] = [];
  const parts: { cpuPerS: number[] }[] = [];
  let times: number[] = [];
  try {
    for (let round = 0; round < options.rounds; round++)
      for (const mode of alternate(["single", "cluster", "parts"] as const, round))
        if (mode === "single") single.push(await singleRound(sim.url, options));
        else if (mode === "cluster") cluster.push(await clusterRound(sim.url, nats, options, round));
        else parts.push(await partsRound(sim.url, options));
    times = await failovers(sim.url, nats, options);
  } finally {
    await nats.stop();
    await sim.stop();
  }
  return report(options, { single, cluster, parts }, times);
}

/** Per rank (busiest first), the median over rounds of each round's CPU figures sorted high to low. */
function byRank(rounds: readonly { cpuPerS: readonly number[] }[], count: number): number[] {
  return Array.from({ length: count }, (_, i) =>
    median(rounds.map((r) => [...r.cpuPerS].sort((a, b) => b - a)[i]!)),
  );
}

/** The bench's figures and checks from its rounds. */
function report(
  options: ClusterBenchOptions,
  rounds: {
    readonly single: readonly { cpuPerS: number; pollsPerS: number }[];
    readonly cluster: readonly { cpuPerS: number[]; pollsPerS: number }[];
    readonly parts: readonly { cpuPerS: number[] }[];
  },
  times: readonly number[],
): BenchResult {
  const { single, cluster } = rounds;
  const singleCpu = median(single.map((s) => s.cpuPerS));
  const memberCpu = byRank(cluster, options.members);
  const partCpu = byRank(rounds.parts, options.members);
  const worst = memberCpu[0]! / singleCpu;
  const sorted = [...times].sort((a, b) => a - b);
  const boundMs = LEASE_MS + PERIOD_MS;
  return {
    name: "cluster",
    title: `${options.members} cluster members share ${options.targets} targets at 1 s vs one daemon polling all of them`,
    method: [
      `one line: CPU (/proc) of each member (\`pragma-monitor run\`, cluster.leaseMs ${LEASE_MS}, a bench-owned nats-server -js) over ${options.measureS} s after ${options.warmupS} s warm-up, vs one daemon with the same config and no cluster, and (the control: what the cores' sharing costs, no cluster code) ${options.members} plain daemons each polling an equal share of the targets side by side, ${options.rounds} round(s) alternating, medians; failover = kill -9 of a member → the poll that made every target it polled polled again by a survivor (each target's own last-success timestamp, scraped every ${WATCH_MS} ms), over ${options.kills} kills, each followed by a replacement member`,
    ],
    figures: [
      { label: "one daemon: CPU", value: singleCpu, unit: "ms CPU per s" },
      { label: "one daemon: polls", value: median(single.map((s) => s.pollsPerS)), unit: "polls/s" },
      ...memberCpu.map((cpu, i) => ({
        label: `member ${i + 1} (by CPU): CPU`,
        value: cpu,
        unit: "ms CPU per s",
      })),
      { label: "members together: polls", value: median(cluster.map((c) => c.pollsPerS)), unit: "polls/s" },
      ...partCpu.map((cpu, i) => ({
        label: `control: plain daemon ${i + 1} of ${options.members} polling its share (by CPU): CPU`,
        value: cpu,
        unit: `ms CPU per s (member ${i + 1} by CPU: ${(memberCpu[i]! / cpu).toFixed(2)}× this)`,
      })),
      { label: "failover p50", value: sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN, unit: "ms" },
      { label: "failover max", value: sorted.at(-1) ?? Number.NaN, unit: `ms over ${times.length} kills` },
    ],
    checks: [
      atMost("busiest member's CPU vs one daemon polling all", worst, 0.4, "×"),
      atMost(
        "failover max (kill -9 → polled again)",
        sorted.at(-1) ?? Number.NaN,
        boundMs,
        " ms (lease + period)",
      ),
    ],
    notes: [
      "not measured here: lost or duplicated deliveries across the kills (exactly-once notification is tested in npm run test:cluster)",
      ...(options.warmupS < 15 || options.measureS < 60
        ? ["quick mode: shorter windows and fewer targets and kills than the target asks"]
        : []),
    ],
  };
}

/** Bench entry: 3 members, 1 500 targets, 15 s + 60 s × 2 rounds, 10 kills; `--quick` 300 targets, 3 s + 10 s × 1, 2 kills. */
export function main(args: readonly string[] = []): Promise<BenchResult> {
  const quick = args.includes("--quick");
  return runClusterBench({
    targets: quick ? 300 : 1_500,
    members: 3,
    warmupS: quick ? 3 : 15,
    measureS: quick ? 10 : 60,
    rounds: quick ? 1 : 2,
    kills: quick ? 2 : 10,
  });
}

if (import.meta.url === `file://${process.argv[1]}`) printResult(await main(process.argv.slice(2)));
