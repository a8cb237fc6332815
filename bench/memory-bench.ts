// Memory bench: RSS of the shipped daemon with 1 000 pairs polled at 1 s and 1 000 WebSocket subscribers, and its growth over a soak.
import { forkChild, stopChild } from "./lib/child.js";
import { offchainMonitors } from "./lib/config.js";
import { syntheticPairIds } from "./lib/pairs.js";
import { atMost, printResult, type BenchResult } from "./lib/result.js";
import {
  cliCommand,
  rssBytesOf,
  scrapeMetric,
  scrapeMetricWhere,
  startShippedDaemon,
  startSimulatorCli,
  type ShippedProcess,
} from "./lib/shipped.js";
import { sleep } from "./lib/stats.js";

/** Settings of one run. */
export interface MemoryBenchOptions {
  readonly pairs: number;
  readonly clients: number;
  readonly warmupS: number;
  readonly soakS: number;
}

/** One sample of the daemon: RSS from /proc, V8 heap and major GCs from its /metrics (prom-client's default metrics). */
interface Mem {
  readonly rss: number;
  readonly heap: number;
  readonly heapTotal: number;
  readonly majorGcs: number;
}

/** Sample the shipped daemon from outside. */
async function sample(daemon: ShippedProcess): Promise<Mem> {
  return {
    rss: rssBytesOf(daemon.pid),
    heap: await scrapeMetric(daemon.url, "nodejs_heap_size_used_bytes"),
    heapTotal: await scrapeMetric(daemon.url, "nodejs_heap_size_total_bytes"),
    majorGcs: await scrapeMetricWhere(daemon.url, "nodejs_gc_duration_seconds_count", 'kind="major"'),
  };
}

/** Samples after warm-up and every ~10 s of the soak, with `clients` subscribers connected; how many connected. */
async function soak(
  daemon: ShippedProcess,
  options: MemoryBenchOptions,
): Promise<{ samples: Mem[]; connected: number }> {
  const clients = await forkChild<{ ready: number }>(
    "ws-clients-child",
    [`${daemon.url.replace("http", "ws")}/ws`, String(options.clients), "subscribe"],
    120_000,
  );
  const samples: Mem[] = [];
  try {
    await sleep(options.warmupS * 1000);
    const steps = Math.max(2, Math.ceil(options.soakS / 10));
    samples.push(await sample(daemon));
    for (let i = 0; i < steps; i++) {
      await sleep((options.soakS * 1000) / steps);
      samples.push(await sample(daemon));
    }
  } finally {
    await stopChild(clients.child);
  }
  return { samples, connected: clients.ready.ready };
}

/** Start simulator, daemon and clients (three processes), sample the daemon's RSS after warm-up and through the soak. */
export async function runMemoryBench(options: MemoryBenchOptions): Promise<BenchResult> {
  const sim = await startSimulatorCli(options.pairs);
  let result: { samples: Mem[]; connected: number };
  try {
    const daemon = await startShippedDaemon({
      upstream: { url: sim.url },
      monitors: { offchain: offchainMonitors(syntheticPairIds(options.pairs), options.pairs, 1000) },
      server: { maxClients: 5_000 },
    });
    try {
      result = await soak(daemon, options);
    } finally {
      await daemon.stop();
    }
  } finally {
    await sim.stop();
  }
  const { samples, connected } = result;
  const mb = (bytes: number): number => bytes / 1024 / 1024;
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  const peak = Math.max(...samples.map((s) => s.rss));
  const growthPct = ((last.rss - first.rss) / first.rss) * 100;
  const heap = (m: Mem): string =>
    `heap ${mb(m.heap).toFixed(1)} used / ${mb(m.heapTotal).toFixed(1)} MB total`;
  return {
    name: "memory",
    title: `daemon RSS with ${options.pairs} pairs and ${options.clients} subscribers, growth over a ${options.soakS} s soak`,
    method: [
      `one line: RSS (/proc VmRSS) of \`node bin/pragma-monitor.js run --config FILE\` (no node flag: \`run\` applies its own heap setting) with ${options.pairs} off-chain monitors at 1 s from \`pragma-monitor simulate --synthetic-pairs ${options.pairs}\` and ${options.clients} \`ws\` clients subscribed to alerts (a third process); sampled after /readyz + ${options.warmupS} s, then every ~10 s for ${options.soakS} s; growth = last vs first sample`,
      `command: ${cliCommand().join(" ")} run --config FILE; after warm-up: ${heap(first)}; end: ${heap(last)}; major GCs during the soak: ${last.majorGcs - first.majorGcs}`,
    ],
    figures: [
      { label: "RSS after warm-up", value: mb(first.rss), unit: "MB" },
      { label: "RSS at end of soak", value: mb(last.rss), unit: "MB" },
      { label: "RSS peak", value: mb(peak), unit: "MB" },
      { label: "heap used at end", value: mb(last.heap), unit: "MB" },
      { label: "clients connected", value: connected, unit: "" },
    ],
    checks: [
      atMost("RSS peak", mb(peak), 150, " MB"),
      atMost("RSS growth over the soak", growthPct, 5, " %"),
    ],
    ...(options.soakS < 600
      ? { notes: [`soak shortened to ${options.soakS} s (the target asks 10 minutes: --soak-seconds 600)`] }
      : {}),
  };
}

/** Bench entry: `--soak-seconds N` (default 600); `--quick` 15 s warm-up instead of 75 s. */
export function main(args: readonly string[] = []): Promise<BenchResult> {
  const at = args.indexOf("--soak-seconds");
  const soakS = at >= 0 ? Number(args[at + 1]) : 600;
  return runMemoryBench({
    pairs: 1_000,
    clients: 1_000,
    warmupS: args.includes("--quick") ? 15 : 75,
    soakS: Number.isFinite(soakS) && soakS > 0 ? soakS : 600,
  });
}

if (import.meta.url === `file://${process.argv[1]}`) printResult(await main(process.argv.slice(2)));
