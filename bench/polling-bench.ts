// Polling bench: CPU of the real daemon polling 500 pairs at 1 s vs a bare undici loop and a naive fetch script, each in its own process.
import type { ChildProcess } from "node:child_process";
import { ask, forkChild, nextMessage, stopChild } from "./lib/child.js";
import type { PollerReport } from "./polling-bench-child.js";
import { atLeast, atMost, printResult, type BenchResult } from "./lib/result.js";
import { median } from "./lib/stats.js";

/** Settings of one run. */
export interface PollingBenchOptions {
  readonly pairs: number;
  readonly warmupS: number;
  readonly measureS: number;
  readonly rounds: number;
}

const MODES = ["daemon", "undici", "fetch"] as const;
type Mode = (typeof MODES)[number];
interface Cpu {
  readonly user: number;
  readonly system: number;
}

async function simCpuMs(sim: ChildProcess): Promise<number> {
  const { cpu } = await ask<{ cpu: Cpu }>(sim, "cpu", 5_000);
  return (cpu.user + cpu.system) / 1000;
}

/** Run one poller child against the simulator; its report plus the simulator's CPU over the same window. */
async function runPoller(
  sim: ChildProcess,
  url: string,
  mode: Mode,
  options: PollingBenchOptions,
): Promise<PollerReport & { readonly simCpuMs: number }> {
  const args = [mode, url, String(options.pairs), String(options.warmupS), String(options.measureS)];
  const timeoutMs = (options.warmupS + 30) * 1000;
  const { child } = await forkChild<{ phase: string }>("polling-bench-child", args, timeoutMs);
  try {
    const simStart = await simCpuMs(sim);
    const report = await nextMessage<PollerReport>(child, (options.measureS + 30) * 1000);
    const simEnd = await simCpuMs(sim);
    return { ...report, simCpuMs: simEnd - simStart };
  } finally {
    await stopChild(child);
  }
}

/** Interleaved rounds (rotating order) of the three pollers against one simulator child; medians. */
export async function runPollingBench(options: PollingBenchOptions): Promise<BenchResult> {
  const { child: sim, ready } = await forkChild<{ port: number }>("simulator-bench-server", [
    "simulator",
    String(options.pairs),
  ]);
  const url = `http://127.0.0.1:${ready.port}`;
  const runs = new Map<Mode, (PollerReport & { simCpuMs: number })[]>(MODES.map((m) => [m, []]));
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (let j = 0; j < MODES.length; j++) {
        const mode = MODES[(round + j) % MODES.length]!;
        runs.get(mode)!.push(await runPoller(sim, url, mode, options));
      }
    }
  } finally {
    await stopChild(sim);
  }
  const cpuPerS = (mode: Mode): number => median(runs.get(mode)!.map((r) => (r.cpuMs / r.windowMs) * 1000));
  const reqPerS = (mode: Mode): number =>
    median(runs.get(mode)!.map((r) => (r.requests / r.windowMs) * 1000));
  const simPct = (mode: Mode): number => median(runs.get(mode)!.map((r) => (r.simCpuMs / r.windowMs) * 100));
  const errors = MODES.map((m) => runs.get(m)!.reduce((sum, r) => sum + r.errors, 0));
  const daemon = cpuPerS("daemon");
  const undici = cpuPerS("undici");
  const naive = cpuPerS("fetch");
  const figures = MODES.flatMap((mode) => [
    { label: `${mode}: CPU`, value: cpuPerS(mode), unit: "ms CPU per s" },
    { label: `${mode}: requests completed`, value: reqPerS(mode), unit: "req/s" },
    { label: `${mode}: simulator CPU meanwhile`, value: simPct(mode), unit: "% of one core" },
  ]);
  return {
    name: "polling",
    title: `polling ${options.pairs} pairs at 1 s against the simulator (each poller and the simulator in its own process)`,
    method: [
      `simulator child serving ${options.pairs} synthetic pairs (QAAA/USD…, modelled on the 8 default pairs) via startSimulator({pairs}); each target is a distinct pair, default entry type/interval, with components`,
      `daemon = createApp() with ${options.pairs} off-chain monitors at periodMs 1000 and the shipped rules; undici = Agent + request() + body.json() loop with a 1 s sleep per URL; fetch = setInterval(1 s) + fetch() + res.json() per URL`,
      `each child warms up ${options.warmupS} s then reports process.cpuUsage() over ${options.measureS} s; ${options.rounds} interleaved rounds (rotating order), medians`,
    ],
    figures: [
      ...figures,
      {
        label: "errors (daemon, undici, fetch)",
        value: errors.reduce((a, b) => a + b, 0),
        unit: errors.join("/"),
      },
    ],
    checks: [
      atMost("daemon CPU vs bare undici loop", daemon / undici, 1.3, "×"),
      atLeast("naive fetch CPU vs daemon (how much cheaper)", naive / daemon, 2, "×"),
    ],
  };
}

/** Bench entry: 500 pairs; `--quick` shortens the windows. */
export function main(args: readonly string[] = []): Promise<BenchResult> {
  const quick = args.includes("--quick");
  return runPollingBench({ pairs: 500, warmupS: 3, measureS: quick ? 5 : 10, rounds: quick ? 1 : 3 });
}

if (import.meta.url === `file://${process.argv[1]}`) printResult(await main(process.argv.slice(2)));
