// Polling bench: CPU of the shipped daemon polling 500 pairs at 1 s vs bare undici loops (daemon's grid, burst) and a naive fetch script.
import { ask, forkChild, stopChild } from "./lib/child.js";
import { offchainMonitors } from "./lib/config.js";
import { syntheticPairIds } from "./lib/pairs.js";
import { atLeast, atMost, printResult, type BenchResult } from "./lib/result.js";
import { scrapeMetric, startShippedDaemon, startSimulatorCli, type ShippedProcess } from "./lib/shipped.js";
import { median } from "./lib/stats.js";
import { alternate, measureWindow, perS, type Counter, type WindowReport } from "./lib/window.js";
import type { PollerCount } from "./polling-bench-child.js";

/** Settings of one run. */
export interface PollingBenchOptions {
  readonly pairs: number;
  readonly warmupS: number;
  readonly measureS: number;
  readonly rounds: number;
}

const MODES = ["daemon", "grid", "burst", "fetch"] as const;
type Mode = (typeof MODES)[number];
const PERIOD_MS = 1000;

/** The shipped daemon's polls (ok and failed) from its /metrics. */
export function daemonPollCounter(url: string): Counter {
  return async () => ({
    count: await scrapeMetric(url, "pragma_monitor_polls_total"),
    errors: await scrapeMetric(url, "pragma_monitor_poll_failures_total"),
  });
}

/** One window of one poller against the simulator. */
async function runPoller(
  sim: ShippedProcess,
  mode: Mode,
  options: PollingBenchOptions,
): Promise<WindowReport> {
  if (mode === "daemon") {
    const daemon = await startShippedDaemon({
      upstream: { url: sim.url },
      monitors: { offchain: offchainMonitors(syntheticPairIds(options.pairs), options.pairs, PERIOD_MS) },
    });
    try {
      const counter = daemonPollCounter(daemon.url);
      return await measureWindow(daemon.pid, sim.pid, counter, options.warmupS, options.measureS);
    } finally {
      await daemon.stop();
    }
  }
  const args = [mode, sim.url, String(options.pairs), String(PERIOD_MS)];
  const { child } = await forkChild<{ started: number }>("polling-bench-child", args, 30_000);
  try {
    const counter: Counter = async () => {
      // a saturated baseline (the naive script piles up fetches on a loaded machine) can take seconds to answer;
      // the CPU is read before the count, so a late answer does not bill its wait to the window
      const c = await ask<PollerCount>(child, "count", 30_000).catch((error: unknown) => {
        throw new Error(`polling baseline "${mode}" did not report its count`, { cause: error });
      });
      return { count: c.requests, errors: c.errors };
    };
    return await measureWindow(child.pid!, sim.pid, counter, options.warmupS, options.measureS);
  } finally {
    await stopChild(child);
  }
}

/** Rounds of the four pollers in alternating order against one simulator (`pragma-monitor simulate`); medians. */
export async function runPollingBench(options: PollingBenchOptions): Promise<BenchResult> {
  const sim = await startSimulatorCli(options.pairs);
  const runs = new Map<Mode, WindowReport[]>(MODES.map((m) => [m, []]));
  try {
    for (let round = 0; round < options.rounds; round++)
      for (const mode of alternate(MODES, round)) runs.get(mode)!.push(await runPoller(sim, mode, options));
  } finally {
    await sim.stop();
  }
  const cpuPerS = (mode: Mode): number => median(runs.get(mode)!.map((r) => perS(r.cpuMs, r.windowMs)));
  const mainPerS = (mode: Mode): number =>
    median(runs.get(mode)!.map((r) => perS(r.mainThreadCpuMs, r.windowMs)));
  const reqPerS = (mode: Mode): number => median(runs.get(mode)!.map((r) => perS(r.count, r.windowMs)));
  const simPct = (mode: Mode): number =>
    median(runs.get(mode)!.map((r) => perS(r.upstreamCpuMs, r.windowMs) / 10));
  const errors = MODES.map((m) => runs.get(m)!.reduce((sum, r) => sum + r.errors, 0));
  const [daemon, grid, burst, naive] = MODES.map(cpuPerS) as [number, number, number, number];
  return {
    name: "polling",
    title: `polling ${options.pairs} pairs at 1 s: the shipped daemon vs bare undici loops and a naive fetch script`,
    method: [
      `one line: CPU (/proc utime+stime) of each poller process over ${options.measureS} s after ${options.warmupS} s warm-up, ${options.rounds} round(s) in alternating order, medians; same ${options.pairs} URLs (built by the daemon's planTargets + pairPricePath), same simulator; the main thread's share from /proc/PID/task/PID/stat (the rest: V8's GC and compiler workers, libuv's pool)`,
      `simulator: \`pragma-monitor simulate --synthetic-pairs ${options.pairs}\`; daemon: \`pragma-monitor run --config FILE\` (bin/pragma-monitor.js, no node flag), ${options.pairs} off-chain monitors at periodMs 1000, shipped rules`,
      "grid = bare undici Agent (16 connections) + request() + body.json(), one timer per 100 ms grid point firing a tenth of the URLs (the daemon's coalesceMs grid), no overlap; burst = the same loop firing all URLs once per second; fetch = setInterval(1 s) + fetch() + res.json() per URL",
    ],
    figures: [
      ...MODES.flatMap((mode) => [
        { label: `${mode}: CPU`, value: cpuPerS(mode), unit: "ms CPU per s" },
        { label: `${mode}: of which the main thread`, value: mainPerS(mode), unit: "ms CPU per s" },
        { label: `${mode}: requests completed`, value: reqPerS(mode), unit: "req/s" },
        { label: `${mode}: simulator CPU meanwhile`, value: simPct(mode), unit: "% of one core" },
      ]),
      { label: "daemon vs burst loop", value: daemon / burst, unit: "×" },
      {
        label: "errors (daemon, grid, burst, fetch)",
        value: errors.reduce((a, b) => a + b, 0),
        unit: errors.join("/"),
      },
    ],
    checks: [
      atMost("daemon CPU vs bare undici loop on the same grid", daemon / grid, 1.0, "×"),
      atLeast("naive fetch CPU vs daemon (how much cheaper)", naive / daemon, 2, "×"),
    ],
    ...(options.warmupS < 15 || options.measureS < 60
      ? { notes: ["quick mode: shorter than the target asks (≥ 15 s warm-up, ≥ 60 s windows)"] }
      : {}),
  };
}

/** Bench entry: 500 pairs; full mode 15 s warm-up + 60 s windows × 2 alternating rounds; `--quick` 3 s + 5 s × 1. */
export function main(args: readonly string[] = []): Promise<BenchResult> {
  const quick = args.includes("--quick");
  return runPollingBench({
    pairs: 500,
    warmupS: quick ? 3 : 15,
    measureS: quick ? 5 : 60,
    rounds: quick ? 1 : 2,
  });
}

if (import.meta.url === `file://${process.argv[1]}`) printResult(await main(process.argv.slice(2)));
