// WebSocket fan-out bench: the product's hub + WS server vs a bare `ws` broadcast of pre-serialised frames, 1 000 clients in a child process.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism } from "node:os";
import pino from "pino";
import { Registry } from "prom-client";
import { WebSocketServer } from "ws";
import type { AlertPayload } from "../src/domain/events.js";
import { createMetrics } from "../src/metrics.js";
import { createEventHub } from "../src/pipeline/event-hub.js";
import { createJournal } from "../src/state/journal.js";
import { createWsServer } from "../src/sinks/ws/server.js";
import { ask, forkChild, stopChild } from "./lib/child.js";
import { benchConfig } from "./lib/config.js";
import { atLeast, atMost, printResult, type BenchResult, type Figure } from "./lib/result.js";
import { median, percentile, sleep } from "./lib/stats.js";
import type { PhaseReport } from "./ws-clients-child.js";

/** Settings of one run. */
export interface WsFanoutOptions {
  readonly clients: number;
  /** Events in the throughput burst. */
  readonly burst: number;
  /** Paced events for the latency phase (every 50 ms). */
  readonly paced: number;
  readonly rounds: number;
  /** Client implementation in the child: "socket" (minimal reader, the default) or "ws" (the `ws` library). */
  readonly reader: "socket" | "ws";
  /** Pin this process (the server) to CPU 0 and the clients' process to CPU 1 when there are ≥ 2 CPUs. */
  readonly pin: boolean;
}

/** CPUs this process may use, read once: pinning changes what `availableParallelism()` reports afterwards. */
const CPUS = availableParallelism();

/** Run-queue wait of this process's main thread so far, in ms (`/proc/self/schedstat`, field 2); NaN if unavailable. */
function runQueueWaitMs(): number {
  try {
    return Number(readFileSync("/proc/self/schedstat", "latin1").split(" ")[1]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

/** Set the CPU affinity of every thread of `pid` (Linux `taskset`); false when unavailable. */
function pinTo(pid: number, cpus: string): boolean {
  try {
    execFileSync("taskset", ["-a", "-p", "-c", cpus, String(pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const nowMs = (): number => performance.timeOrigin + performance.now();

/** A realistic alert payload carrying the send time in its context. */
export function benchAlert(i: number, sentAt: number): AlertPayload {
  const iso = new Date(Math.floor(sentAt)).toISOString();
  return {
    fingerprint: "9f2c41d0a7b3e6f1",
    status: "firing",
    rule: "price_change",
    severity: "critical",
    labels: { pair: "BTC/USD", market: "offchain", entry_type: "spot", window: "1min" },
    summary: `BTC/USD moved +5.02% in 1min (threshold 2%) #${i}`,
    value: 0.0502,
    threshold: 0.02,
    startsAt: iso,
    endsAt: null,
    reason: "repeat",
    context: { price: "86184.12", previous: "82069.27", observedAt: iso, sentAt },
  };
}

/** A fan-out server under test: `publish` sends one event to every client. */
interface FanoutServer {
  readonly url: string;
  readonly subscribe: boolean;
  publish(i: number): void;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/** The product path: event hub (journal, seq) → createWsServer (filters, encode once, guarded sends). */
async function productServer(): Promise<FanoutServer> {
  const config = benchConfig({ server: { maxClients: 5_000 } });
  const hub = createEventHub({
    journal: createJournal(config.server.journalSize),
    nowMs: Date.now,
    version: "bench",
  });
  const server = createServer();
  const ws = createWsServer({
    server,
    path: "/ws",
    source: hub,
    config: config.server,
    metrics: createMetrics(new Registry()),
    logger: pino({ level: "silent" }),
    knownPairs: () => new Set(["BTC/USD"]),
    knownRules: () => new Set(["price_change"]),
    version: "bench",
  });
  const port = await listen(server);
  return {
    url: `ws://127.0.0.1:${port}/ws`,
    subscribe: true,
    publish: (i) => void hub.publishAlert(benchAlert(i, nowMs())),
    close: async () => {
      await ws.close(1_000);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The baseline: bare `ws`, each event serialised once and the same buffer sent to every client. */
async function bareServer(): Promise<FanoutServer> {
  const server = createServer();
  const wss = new WebSocketServer({ server });
  const port = await listen(server);
  let seq = 0;
  return {
    url: `ws://127.0.0.1:${port}`,
    subscribe: false,
    publish: (i) => {
      const frame = Buffer.from(JSON.stringify({ type: "alert", seq: ++seq, alert: benchAlert(i, nowMs()) }));
      for (const client of wss.clients) client.send(frame, { binary: false, compress: false });
    },
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One run of one server: burst throughput, paced latencies and the CPU each side used in the paced phase. */
interface Run {
  readonly deliveriesPerS: number;
  readonly latenciesMs: readonly number[];
  readonly lost: number;
  /** CPU of the clients' process in the paced phase, % of one core. */
  readonly clientCpuPct: number;
  /** Event-loop utilisation of the clients' process in the paced phase. */
  readonly clientElu: number;
  /** CPU of this (server) process in the paced phase, % of one core. */
  readonly serverCpuPct: number;
  /** Paced phase: ms per event the server's / the clients' main thread waited, runnable, for a CPU. */
  readonly serverWaitMsPerEvent: number;
  readonly clientWaitMsPerEvent: number;
}

/** Burst throughput (deliveries/s) and paced latencies of one server with the clients in a child. */
async function measure(make: () => Promise<FanoutServer>, options: WsFanoutOptions): Promise<Run> {
  const server = await make();
  const { child } = await forkChild<{ ready: number }>(
    "ws-clients-child",
    [server.url, String(options.clients), server.subscribe ? "subscribe" : "raw", "10", options.reader],
    60_000,
  );
  const pinned = options.pin && CPUS >= 2 && child.pid !== undefined;
  if (pinned) {
    pinTo(process.pid, "0");
    pinTo(child.pid, "1");
  }
  try {
    const burstDone = ask<PhaseReport>(
      child,
      { phase: "burst", expect: options.burst, timeoutMs: 60_000 },
      70_000,
    );
    await sleep(50);
    const startMs = nowMs();
    for (let i = 0; i < options.burst; i++) {
      server.publish(i);
      if (i % 5 === 4) await new Promise((resolve) => setImmediate(resolve));
    }
    const burst = await burstDone;
    const deliveriesPerS = (burst.received / (burst.lastAtMs - startMs)) * 1000;
    const pacedDone = ask<PhaseReport>(
      child,
      { phase: "paced", expect: options.paced, timeoutMs: 30_000 },
      40_000,
    );
    await sleep(50);
    const cpuStart = process.cpuUsage();
    const wallStart = performance.now();
    const waitStart = runQueueWaitMs();
    for (let i = 0; i < options.paced; i++) {
      server.publish(i);
      await sleep(50);
    }
    const paced = await pacedDone;
    const serverWaitMs = runQueueWaitMs() - waitStart;
    const cpu = process.cpuUsage(cpuStart);
    const serverCpuPct = ((cpu.user + cpu.system) / 1000 / (performance.now() - wallStart)) * 100;
    const lost =
      options.burst * options.clients - burst.received + options.paced * options.clients - paced.received;
    return {
      deliveriesPerS,
      latenciesMs: paced.latenciesMs,
      lost,
      clientCpuPct: (paced.cpuMs / paced.wallMs) * 100,
      clientElu: paced.elu,
      serverCpuPct,
      serverWaitMsPerEvent: serverWaitMs / options.paced,
      clientWaitMsPerEvent: paced.runQueueWaitMs / options.paced,
    };
  } finally {
    if (pinned) pinTo(process.pid, `0-${CPUS - 1}`);
    await stopChild(child);
    await server.close();
  }
}

/** Interleaved rounds of product and bare; medians of throughput, pooled latencies of the product. */
export async function runWsFanoutBench(options: WsFanoutOptions): Promise<BenchResult> {
  const runs = { product: [] as Run[], bare: [] as Run[] };
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? (["product", "bare"] as const) : (["bare", "product"] as const);
    for (const which of order)
      runs[which].push(await measure(which === "product" ? productServer : bareServer, options));
  }
  const pooled = (list: readonly Run[]): number[] => list.flatMap((run) => run.latenciesMs);
  const mid = (list: readonly Run[], pick: (run: Run) => number): number => median(list.map(pick));
  const productLatencies = pooled(runs.product);
  const bareLatencies = pooled(runs.bare);
  const ratio = mid(runs.product, (r) => r.deliveriesPerS) / mid(runs.bare, (r) => r.deliveriesPerS);
  const p99 = percentile(productLatencies, 99);
  const offered = (1000 / 50) * options.clients;
  const pinned = options.pin && CPUS >= 2;
  return {
    name: "ws",
    title: `WebSocket fan-out to ${options.clients.toLocaleString("en-US")} subscribers (clients in a child process)`,
    method: [
      `product = createEventHub (journal, seq) + createWsServer (subscribe filter, encode once per event); bare = ws WebSocketServer sending one JSON.stringify'd buffer per event to every client`,
      `throughput: burst of ${options.burst} alert events (5 per macrotask), deliveries/s until the last client frame; latency: ${options.paced} events at 20/s (${offered.toLocaleString("en-US")} deliveries/s offered), sentAt stamped before publish (so it includes the whole send loop), read on every 10th client`,
      options.reader === "socket"
        ? `clients: one child process of minimal RFC 6455 readers on raw sockets (time taken as the read callback starts, headers parsed in place); with \`ws\` clients (--ws-client) their parser and events run before the timestamp, so the clients' own backlog is timed too`
        : `clients: one child process of \`ws\` library clients (their per-frame JS cost is part of the measured tail)`,
      pinned
        ? `server (this process) pinned to CPU 0, clients' process to CPU 1 (taskset): two client processes would have to share the server's core on this 2-core box`
        : `no CPU pinning`,
      `${options.rounds} interleaved rounds (alternating order), medians; latencies pooled over rounds`,
    ],
    figures: [
      {
        label: "product throughput",
        value: mid(runs.product, (r) => r.deliveriesPerS),
        unit: "deliveries/s",
      },
      { label: "bare ws throughput", value: mid(runs.bare, (r) => r.deliveriesPerS), unit: "deliveries/s" },
      { label: "product latency p50", value: percentile(productLatencies, 50), unit: "ms" },
      { label: "product latency p99", value: p99, unit: "ms" },
      { label: "bare latency p50", value: percentile(bareLatencies, 50), unit: "ms" },
      { label: "bare latency p99", value: percentile(bareLatencies, 99), unit: "ms" },
      {
        label: "paced: product server CPU",
        value: mid(runs.product, (r) => r.serverCpuPct),
        unit: "% of a core",
      },
      { label: "paced: bare server CPU", value: mid(runs.bare, (r) => r.serverCpuPct), unit: "% of a core" },
      {
        label: "paced: clients' CPU (product)",
        value: mid(runs.product, (r) => r.clientCpuPct),
        unit: "% of a core",
      },
      {
        label: "paced: clients' event-loop utilisation (product)",
        value: mid(runs.product, (r) => r.clientElu) * 100,
        unit: "%",
      },
      {
        label: "paced: server waiting for a CPU (product)",
        value: mid(runs.product, (r) => r.serverWaitMsPerEvent),
        unit: "ms per event",
      },
      {
        label: "paced: clients waiting for a CPU (product)",
        value: mid(runs.product, (r) => r.clientWaitMsPerEvent),
        unit: "ms per event",
      },
      {
        label: "product frames lost (clients closed as slow)",
        value: runs.product.reduce((sum, run) => sum + run.lost, 0),
        unit: "",
      },
    ],
    checks: [
      atLeast("throughput vs bare ws", ratio, 0.8, "×"),
      atMost("p99 delivery latency", p99, 25, " ms"),
    ],
  };
}

/** Both client kinds' results as one: figures and checks labelled by client kind, methods kept once each. */
function mergeReaders(socket: BenchResult, ws: BenchResult): BenchResult {
  const label =
    (kind: string) =>
    (f: Figure): Figure => ({ ...f, label: `${kind}: ${f.label}` });
  return {
    ...socket,
    title: `${socket.title}, with raw-socket readers and with \`ws\` library clients`,
    method: [
      "one line: in-process event hub + createWsServer (the daemon's fan-out code) vs a bare `ws` broadcast of pre-serialised frames to 1 000 clients in a child process, measured once with minimal raw-socket readers and once with `ws` library clients",
      ...socket.method,
      ...ws.method.filter((m) => !socket.method.includes(m)),
    ],
    figures: [...socket.figures.map(label("raw-socket clients")), ...ws.figures.map(label("ws clients"))],
    checks: [
      ...socket.checks.map((c) => ({ ...c, what: `${c.what} (raw-socket clients)` })),
      ...ws.checks.map((c) => ({ ...c, what: `${c.what} (ws clients)` })),
    ],
  };
}

/** Bench entry: 1 000 clients, raw-socket readers then `ws` clients (`--ws-client` / `--socket-client`: only one). */
export async function main(args: readonly string[] = []): Promise<BenchResult> {
  const quick = args.includes("--quick");
  const run = (reader: "socket" | "ws"): Promise<BenchResult> =>
    runWsFanoutBench({
      clients: 1_000,
      burst: quick ? 100 : 200,
      paced: quick ? 40 : 100,
      rounds: quick ? 1 : 3,
      reader,
      pin: !args.includes("--no-pin"),
    });
  if (args.includes("--ws-client")) return run("ws");
  if (args.includes("--socket-client")) return run("socket");
  const socket = await run("socket");
  return mergeReaders(socket, await run("ws"));
}

if (import.meta.url === `file://${process.argv[1]}`) printResult(await main(process.argv.slice(2)));
