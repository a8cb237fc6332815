// One measurement window of a process seen from outside: CPU from /proc over the window, a counter read at both ends.
import { cpuMsOf, mainThreadCpuMsOf } from "./shipped.js";
import { sleep } from "./stats.js";

/** What one window measured: CPU of the process and of its upstream, work done, wall time. */
export interface WindowReport {
  readonly cpuMs: number;
  /** The part of cpuMs on the process's main thread (the rest: V8's GC and compiler workers, libuv's pool). */
  readonly mainThreadCpuMs: number;
  readonly upstreamCpuMs: number;
  readonly count: number;
  readonly errors: number;
  readonly windowMs: number;
}

/** A counter the process exposes: completed and failed units of work so far. */
export type Counter = () => Promise<{ readonly count: number; readonly errors: number }>;

/**
 * Wait `warmupS`, then measure `measureS`: CPU of `pid` and of `upstreamPid` (the simulator) from /proc, and the
 * counter's progress. The counter is read outside the CPU interval (a metrics scrape costs the daemon CPU).
 */
export async function measureWindow(
  pid: number,
  upstreamPid: number,
  counter: Counter,
  warmupS: number,
  measureS: number,
): Promise<WindowReport> {
  await sleep(warmupS * 1000);
  const before = await counter();
  const cpu0 = cpuMsOf(pid);
  const main0 = mainThreadCpuMsOf(pid);
  const up0 = cpuMsOf(upstreamPid);
  const t0 = performance.now();
  await sleep(measureS * 1000);
  const cpu1 = cpuMsOf(pid);
  const main1 = mainThreadCpuMsOf(pid);
  const up1 = cpuMsOf(upstreamPid);
  const windowMs = performance.now() - t0;
  const after = await counter();
  return {
    cpuMs: cpu1 - cpu0,
    mainThreadCpuMs: main1 - main0,
    upstreamCpuMs: up1 - up0,
    count: after.count - before.count,
    errors: after.errors - before.errors,
    windowMs,
  };
}

/** Per-second rate of a window's figure. */
export function perS(value: number, windowMs: number): number {
  return (value / windowMs) * 1000;
}

/** Order of `items` in round `round`: forward in even rounds, reversed in odd ones (alternating order). */
export function alternate<T>(items: readonly T[], round: number): T[] {
  return round % 2 === 0 ? [...items] : [...items].reverse();
}
