// Memory bench: daemon RSS with 1 000 pairs polled at 1 s and 1 000 WebSocket subscribers, and its growth over a soak.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ask, forkChild, stopChild } from "./lib/child.js";
import { atMost, printResult, type BenchResult } from "./lib/result.js";
import { sleep } from "./lib/stats.js";

/** Settings of one run. */
export interface MemoryBenchOptions {
  readonly pairs: number;
  readonly clients: number;
  readonly warmupS: number;
  readonly soakS: number;
}

/** What the daemon child reports (process.memoryUsage plus GC counts). */
interface Mem {
  readonly rss: number;
  readonly heap: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers: number;
  readonly gc: { readonly minor: number; readonly major: number; readonly majorMs: number };
}

/**
 * The node flags the shipped systemd unit starts the daemon with (`ExecStart=/usr/bin/node <flags> …/main.js`),
 * so the bench measures the daemon as deployed rather than under bare `node` defaults.
 */
export function productNodeFlags(): string[] {
  // bench/ under tsx, dist/bench/ when built
  const candidates = ["../systemd/pragma-monitor.service", "../../systemd/pragma-monitor.service"].map(
    (path) => fileURLToPath(new URL(path, import.meta.url)),
  );
  for (const file of candidates) {
    try {
      const line = /^ExecStart=\S+node((?:\s+--\S+)*)\s/m.exec(readFileSync(file, "utf8"));
      return line?.[1]?.trim().split(/\s+/).filter(Boolean) ?? [];
    } catch {
      // try the next location (the bench runs from bench/ under tsx or from dist/bench when built)
    }
  }
  return [];
}

/** Start simulator, daemon and clients (three processes), sample the daemon's RSS after warm-up and through the soak. */
export async function runMemoryBench(options: MemoryBenchOptions): Promise<BenchResult> {
  const sim = await forkChild<{ port: number }>("simulator-bench-server", [
    "simulator",
    String(options.pairs),
  ]);
  const simUrl = `http://127.0.0.1:${sim.ready.port}`;
  const nodeFlags = productNodeFlags();
  const daemon = await forkChild<{ port: number }>(
    "daemon-child",
    [simUrl, String(options.pairs), "1000"],
    30_000,
    nodeFlags,
  );
  const clients = await forkChild<{ ready: number }>(
    "ws-clients-child",
    [`ws://127.0.0.1:${daemon.ready.port}/ws`, String(options.clients), "subscribe"],
    120_000,
  );
  const samples: Mem[] = [];
  try {
    await sleep(options.warmupS * 1000);
    const steps = Math.max(2, Math.ceil(options.soakS / 10));
    samples.push(await ask<Mem>(daemon.child, "mem", 5_000));
    for (let i = 0; i < steps; i++) {
      await sleep((options.soakS * 1000) / steps);
      samples.push(await ask<Mem>(daemon.child, "mem", 5_000));
    }
  } finally {
    await stopChild(clients.child);
    await stopChild(daemon.child);
    await stopChild(sim.child);
  }
  const mb = (bytes: number): number => bytes / 1024 / 1024;
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  const peak = Math.max(...samples.map((s) => s.rss));
  const growthPct = ((last.rss - first.rss) / first.rss) * 100;
  const breakdown = (m: Mem): string =>
    `heap ${mb(m.heap).toFixed(1)} used / ${mb(m.heapTotal).toFixed(1)} MB total, external ${mb(m.external).toFixed(1)} MB ` +
    `(array buffers ${mb(m.arrayBuffers).toFixed(1)} MB)`;
  return {
    name: "memory",
    title: `daemon RSS with ${options.pairs} pairs and ${options.clients} subscribers, growth over a ${options.soakS} s soak`,
    method: [
      `simulator child (${options.pairs} synthetic pairs), daemon child (createApp, ${options.pairs} off-chain monitors at 1 s, shipped rules), ${options.clients} WebSocket clients subscribed to alerts in a third process`,
      `daemon node flags: ${nodeFlags.length > 0 ? nodeFlags.join(" ") : "none"} (from systemd/pragma-monitor.service ExecStart, the shipped default)`,
      `RSS sampled from the daemon (process.memoryUsage) after a ${options.warmupS} s warm-up (the price-history rings fill over the longest window, 60 s for the shipped rules, after the first polls spread over one period; the journal is bounded), then every ~10 s for ${options.soakS} s; growth = last vs first sample`,
      `after warm-up: ${breakdown(first)}; end: ${breakdown(last)}`,
      `GCs during the soak: ${last.gc.minor - first.gc.minor} minor, ${last.gc.major - first.gc.major} major (${(last.gc.majorMs - first.gc.majorMs).toFixed(0)} ms)`,
    ],
    figures: [
      { label: "RSS after warm-up", value: mb(first.rss), unit: "MB" },
      { label: "RSS at end of soak", value: mb(last.rss), unit: "MB" },
      { label: "RSS peak", value: mb(peak), unit: "MB" },
      { label: "heap used at end", value: mb(last.heap), unit: "MB" },
      { label: "clients connected", value: clients.ready.ready, unit: "" },
    ],
    checks: [
      atMost("RSS peak", mb(peak), 150, " MB"),
      atMost("RSS growth over the soak", growthPct, 5, " %"),
    ],
    ...(options.soakS < 600
      ? { notes: [`soak shortened to ${options.soakS} s (DESIGN §7 asks 10 minutes: --soak-seconds 600)`] }
      : {}),
  };
}

/** Bench entry: `--soak-seconds N` (default 600). */
export function main(args: readonly string[] = []): Promise<BenchResult> {
  const at = args.indexOf("--soak-seconds");
  const soakS = at >= 0 ? Number(args[at + 1]) : 600;
  return runMemoryBench({
    pairs: 1_000,
    clients: 1_000,
    warmupS: 75,
    soakS: Number.isFinite(soakS) && soakS > 0 ? soakS : 600,
  });
}

if (import.meta.url === `file://${process.argv[1]}`) printResult(await main(process.argv.slice(2)));
