// Simulator throughput bench: pair-price req/s over loopback vs a bare node:http server, servers in child processes.
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";

/** Settings of one bench run. */
export interface SimulatorBenchOptions {
  readonly durationMs: number;
  readonly concurrency: number;
}

/** Requests per second of each target and the ratios to the bare server. */
export interface SimulatorBenchResult {
  readonly bareReqPerS: number;
  /** Live pair prices across 8 pairs with components (served from the per-tick cache after the first hit). */
  readonly simulatorReqPerS: number;
  /** Distinct historical timestamps: every request computes a fresh body (worst case). */
  readonly uncachedReqPerS: number;
  readonly ratio: number;
  readonly uncachedRatio: number;
}

const PAIRS = ["BTC/USD", "ETH/USD", "SOL/USD", "STRK/USD", "USDC/USD", "USDT/USD", "EUR/USD", "XAU/USD"];

/** Fork the bench server entry (the .ts file under tsx, the compiled .js under node) and wait for its port. */
async function spawnServer(mode: "bare" | "simulator"): Promise<{ child: ChildProcess; url: string }> {
  const extension = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
  const entry = fileURLToPath(new URL(`./simulator-bench-server${extension}`, import.meta.url));
  const child = fork(entry, [mode], {
    execArgv: process.execArgv,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (message) => resolve((message as { port: number }).port));
    child.once("exit", (code) => reject(new Error(`bench server exited early with code ${code}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

async function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.send("stop");
  await exited;
}

/** Drive `url` with `concurrency` keep-alive workers for `durationMs`; returns completed 200s per second. */
async function drive(
  url: string,
  paths: (i: number) => string,
  options: SimulatorBenchOptions,
): Promise<number> {
  const pool = new Pool(url, { connections: options.concurrency, pipelining: 1, keepAliveTimeout: 10_000 });
  const warmupEndMs = performance.now() + 300;
  let counter = 0;
  const worker = async (deadlineMs: number, count: boolean): Promise<number> => {
    let done = 0;
    while (performance.now() < deadlineMs) {
      const response = await pool.request({ path: paths(counter++), method: "GET" });
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
      if (count) done++;
    }
    return done;
  };
  await Promise.all(Array.from({ length: options.concurrency }, () => worker(warmupEndMs, false)));
  const startedMs = performance.now();
  const counts = await Promise.all(
    Array.from({ length: options.concurrency }, () => worker(startedMs + options.durationMs, true)),
  );
  const elapsedS = (performance.now() - startedMs) / 1000;
  await pool.close();
  return counts.reduce((a, b) => a + b, 0) / elapsedS;
}

/** Measure bare, simulator (live) and simulator (uncached) throughput side by side. */
export async function runSimulatorBench(options: SimulatorBenchOptions): Promise<SimulatorBenchResult> {
  const bare = await spawnServer("bare");
  const bareReqPerS = await drive(bare.url, () => "/node/v1/data/BTC/USD", options).finally(() =>
    stopServer(bare.child),
  );
  const sim = await spawnServer("simulator");
  try {
    const live = (i: number): string =>
      `/node/v1/data/${PAIRS[i % PAIRS.length]}?interval=1s&aggregation=median&with_components=true`;
    const simulatorReqPerS = await drive(sim.url, live, options);
    const baseS = Math.floor(Date.now() / 1000) - 86_400;
    const uncached = (i: number): string =>
      `/node/v1/data/${PAIRS[i % PAIRS.length]}?interval=1s&aggregation=median&with_components=true&timestamp=${baseS - i}`;
    const uncachedReqPerS = await drive(sim.url, uncached, options);
    return {
      bareReqPerS,
      simulatorReqPerS,
      uncachedReqPerS,
      ratio: simulatorReqPerS / bareReqPerS,
      uncachedRatio: uncachedReqPerS / bareReqPerS,
    };
  } finally {
    await stopServer(sim.child);
  }
}

/** Run the bench with default settings and print the results. */
export async function main(): Promise<void> {
  const durationMs = Number(process.env["SIM_BENCH_DURATION_MS"] ?? 5_000);
  const result = await runSimulatorBench({ durationMs, concurrency: 32 });
  const fmt = (n: number): string => Math.round(n).toLocaleString("en-US");
  console.log(
    `simulator bench (${durationMs} ms per target, 32 keep-alive connections, servers in child processes)`,
  );
  console.log(`  bare node:http constant body : ${fmt(result.bareReqPerS)} req/s`);
  console.log(
    `  simulator pair price (live)  : ${fmt(result.simulatorReqPerS)} req/s  ratio ${result.ratio.toFixed(2)}`,
  );
  console.log(
    `  simulator pair price (uncached, historical) : ${fmt(result.uncachedReqPerS)} req/s  ratio ${result.uncachedRatio.toFixed(2)}`,
  );
  console.log(`  target >= 5,000 req/s: ${result.simulatorReqPerS >= 5_000 ? "met" : "NOT met"}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
