// The programs as shipped: the daemon and the simulator started through the built CLI (bin/pragma-monitor.js) with no node flag, measured from /proc.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { benchConfigContent, tempDir } from "./config.js";
import { sleep } from "./stats.js";

/** A program started through the CLI: its pid, base URL and a stop that always ends it. */
export interface ShippedProcess {
  readonly pid: number;
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** The repository root (bench/lib under tsx, dist/bench/lib when built). */
export function repoRoot(): string {
  const up = import.meta.url.endsWith(".ts") ? "../.." : "../../..";
  return fileURLToPath(new URL(up, import.meta.url));
}

/** The command a user runs: `node bin/pragma-monitor.js`, without this process's node flags (e.g. --expose-gc). */
export function cliCommand(): readonly string[] {
  return [process.execPath, join(repoRoot(), "bin", "pragma-monitor.js")];
}

/** Children still running: killed when this process exits, so no daemon or simulator outlives a failed bench. */
const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));

/**
 * Run `pragma-monitor --help` once: in a source checkout the bin compiles dist/ first when a source is newer than
 * the last build, which must not happen inside a measured window or a readiness timeout.
 */
export function ensureCliBuilt(): void {
  const [node, bin] = cliCommand();
  execFileSync(node!, [bin!, "--help"], { stdio: ["ignore", "ignore", "inherit"] });
}

/** Start `pragma-monitor <args>`; stdout goes to `onStdout`, stderr to ours. */
function startCli(args: readonly string[], onStdout: (text: string) => void): ChildProcess {
  const [node, bin] = cliCommand();
  const child = spawn(node!, [bin!, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  child.stdout.setEncoding("utf8").on("data", onStdout);
  live.add(child);
  child.once("exit", () => live.delete(child));
  return child;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
async function terminate(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** `pragma-monitor simulate --synthetic-pairs N` on a free port; resolves once it printed its URL. */
export async function startSimulatorCli(syntheticPairs: number, timeoutMs = 60_000): Promise<ShippedProcess> {
  let output = "";
  let resolveUrl: (url: string) => void = () => undefined;
  const printed = new Promise<string>((resolve) => (resolveUrl = resolve));
  const child = startCli(["simulate", "--synthetic-pairs", String(syntheticPairs)], (text) => {
    output += text;
    const url = /listening on (http:\/\/[^\s]+)/.exec(output)?.[1];
    if (url !== undefined) resolveUrl(url);
  });
  const url = await Promise.race([printed, exitOrTimeout(child, timeoutMs, "simulate")]).catch(
    async (error: unknown) => {
      await terminate(child);
      throw error;
    },
  );
  return { pid: child.pid!, url, child, stop: () => terminate(child) };
}

/** Rejects when the child exits or `timeoutMs` passes (raced against its readiness). */
function exitOrTimeout(child: ChildProcess, timeoutMs: number, what: string): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: not ready after ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
    child.once("exit", (code) => reject(new Error(`${what} exited early (code ${code})`)));
  });
}

/** A free TCP port on 127.0.0.1 (the daemon listens on it: its config names the port). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A starting daemon's work so far: upstream requests (the start-up history fetch too) and polls; null before /metrics answers. */
async function startupProgress(url: string): Promise<number | null> {
  try {
    const requests = await scrapeMetric(url, "pragma_monitor_upstream_requests_total");
    return requests + (await scrapeMetric(url, "pragma_monitor_polls_total"));
  } catch {
    return null;
  }
}

/** Resolves once `url + readyPath` answers 200; rejects after `stallMs` without progress (see startupProgress) or `capMs` in all. */
async function waitReady(
  child: ChildProcess,
  url: string,
  readyPath: string,
  stallMs: number,
  capMs: number,
): Promise<void> {
  const startedAtMs = Date.now();
  let progressAtMs = startedAtMs;
  let progress: number | null = null;
  let checkedAtMs = 0;
  // an exited child ends the wait (its exit is the error the caller reports)
  while (child.exitCode === null && child.signalCode === null) {
    const ok = await fetch(`${url}${readyPath}`).then(
      (r) => r.body?.cancel().then(() => r.ok),
      () => false,
    );
    if (ok === true) return;
    const nowMs = Date.now();
    if (nowMs - checkedAtMs >= 5_000) {
      checkedAtMs = nowMs;
      const now = await startupProgress(url);
      if (now !== null && now !== progress) [progress, progressAtMs] = [now, nowMs];
    }
    if (nowMs - progressAtMs > stallMs)
      throw new Error(`pragma-monitor run: not ready, and no upstream request for ${stallMs} ms`);
    if (nowMs - startedAtMs > capMs) throw new Error(`pragma-monitor run: not ready after ${capMs} ms`);
    await sleep(100);
  }
}

/**
 * `pragma-monitor run --config FILE` with `user` layered as the benches do (shipped rules, state in a temp dir, log
 * level warn); resolves once `readyPath` answers 200: /readyz (default) once every target was polled (after the
 * start-up history fetch), /healthz as soon as it listens. A loaded machine can take minutes to get 1 000 targets
 * ready, so the start fails only when the daemon makes no upstream request for `stallMs` (or after `capMs`).
 */
export async function startShippedDaemon(
  user: Record<string, unknown>,
  readyPath: "/readyz" | "/healthz" = "/readyz",
  stallMs = 180_000,
  capMs = 900_000,
): Promise<ShippedProcess> {
  const port = await freePort();
  const server = { ...((user["server"] ?? {}) as Record<string, unknown>), host: "127.0.0.1", port };
  const file = join(tempDir("config"), "config.json");
  writeFileSync(file, JSON.stringify(benchConfigContent({ ...user, server })));
  const child = startCli(["run", "--config", file], () => undefined);
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_resolve, reject) =>
    child.once("exit", (code) => reject(new Error(`pragma-monitor run exited early (code ${code})`))),
  );
  await Promise.race([
    waitReady(child, url, readyPath, stallMs, capMs).then(() => waitWarmedUp(url, capMs)),
    exited,
  ]).catch(async (error: unknown) => {
    await terminate(child);
    throw error;
  });
  return { pid: child.pid!, url, child, stop: () => terminate(child) };
}

/**
 * Resolves once the daemon's warm-up candle requests (at most a few in flight, after readiness) stopped for 3 s, so a
 * measured window sees steady polling only; at once when warm-up is off (no candle request ever).
 */
export async function waitWarmedUp(url: string, capMs: number): Promise<void> {
  const startedAtMs = Date.now();
  let last = -1;
  let stableSinceMs = Date.now();
  while (Date.now() - startedAtMs < capMs) {
    const now = await scrapeMetricWhere(
      url,
      "pragma_monitor_upstream_requests_total",
      'endpoint="candlestick"',
    );
    if (now !== last) [last, stableSinceMs] = [now, Date.now()];
    else if (Date.now() - stableSinceMs >= 3_000) return;
    await sleep(1_000);
  }
  throw new Error(`pragma-monitor run: warm-up candle requests still going after ${capMs} ms`);
}

let clockTicksPerS = 0;

/** CPU time (user + system, ms) a process has used so far, from /proc/PID/stat (Linux; clock-tick resolution). */
export function cpuMsOf(pid: number): number {
  return cpuMsOfStat(`/proc/${pid}/stat`);
}

/**
 * CPU time (ms) of a process's main thread alone (its JavaScript, and the GC work V8 does there), from
 * /proc/PID/task/PID/stat; the rest of cpuMsOf is its other threads (V8's GC and compiler workers, libuv's pool).
 */
export function mainThreadCpuMsOf(pid: number): number {
  return cpuMsOfStat(`/proc/${pid}/task/${pid}/stat`);
}

/** User + system CPU (ms) of a /proc stat file (a process's or one thread's). */
function cpuMsOfStat(path: string): number {
  if (clockTicksPerS === 0)
    clockTicksPerS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }));
  const stat = readFileSync(path, "latin1");
  // the command name may contain spaces: fields are counted after its closing parenthesis (utime = 14, stime = 15)
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) / clockTicksPerS) * 1000;
}

/** Resident set size of a process in bytes (VmRSS of /proc/PID/status, what process.memoryUsage().rss reports). */
export function rssBytesOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "latin1");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) * 1024;
}

/** Sum of a Prometheus counter/gauge over all its series, scraped from the daemon's /metrics. */
export function scrapeMetric(url: string, name: string): Promise<number> {
  return scrapeMetricWhere(url, name, "");
}

/** Sum of a metric over the series whose labels contain `labelText` (e.g. `kind="major"`; "" = all). */
export async function scrapeMetricWhere(url: string, name: string, labelText: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!(line.startsWith(`${name}{`) || line.startsWith(`${name} `)) || !line.includes(labelText)) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}
