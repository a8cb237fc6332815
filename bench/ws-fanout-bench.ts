// WebSocket fan-out bench: the product's hub + WS server vs a bare `ws` broadcast of pre-serialised frames, 1 000 clients in a child process.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { Registry } from "prom-client";
import { WebSocketServer } from "ws";
import type { AlertPayload } from "../src/domain/events.js";
import { createMetrics } from "../src/metrics.js";
import { createEventHub } from "../src/pipeline/event-hub.js";
import { createJournal } from "../src/pipeline/journal.js";
import { createWsServer } from "../src/sinks/ws/server.js";
import { ask, forkChild, stopChild } from "./lib/child.js";
import { benchConfig } from "./lib/config.js";
import { atLeast, atMost, printResult, type BenchResult } from "./lib/result.js";
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

/** Burst throughput (deliveries/s) and paced latencies of one server with the clients in a child. */
async function measure(
  make: () => Promise<FanoutServer>,
  options: WsFanoutOptions,
): Promise<{ deliveriesPerS: number; latenciesMs: readonly number[]; lost: number }> {
  const server = await make();
  const { child } = await forkChild<{ ready: number }>(
    "ws-clients-child",
    [server.url, String(options.clients), server.subscribe ? "subscribe" : "raw"],
    60_000,
  );
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
    for (let i = 0; i < options.paced; i++) {
      server.publish(i);
      await sleep(50);
    }
    const paced = await pacedDone;
    const lost =
      options.burst * options.clients - burst.received + options.paced * options.clients - paced.received;
    return { deliveriesPerS, latenciesMs: paced.latenciesMs, lost };
  } finally {
    await stopChild(child);
    await server.close();
  }
}

/** Interleaved rounds of product and bare; medians of throughput, pooled latencies of the product. */
export async function runWsFanoutBench(options: WsFanoutOptions): Promise<BenchResult> {
  const product: number[] = [];
  const bare: number[] = [];
  const productLatencies: number[] = [];
  const bareLatencies: number[] = [];
  let lost = 0;
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? ["product", "bare"] : ["bare", "product"];
    for (const which of order) {
      const run = await measure(which === "product" ? productServer : bareServer, options);
      (which === "product" ? product : bare).push(run.deliveriesPerS);
      (which === "product" ? productLatencies : bareLatencies).push(...run.latenciesMs);
      if (which === "product") lost += run.lost;
    }
  }
  const ratio = median(product) / median(bare);
  const p99 = percentile(productLatencies, 99);
  return {
    name: "ws",
    title: `WebSocket fan-out to ${options.clients.toLocaleString("en-US")} subscribers (clients in a child process)`,
    method: [
      `product = createEventHub (journal, seq) + createWsServer (subscribe filter, encode once per event); bare = ws WebSocketServer sending one JSON.stringify'd buffer per event to every client`,
      `throughput: burst of ${options.burst} alert events (5 per macrotask), deliveries/s until the last client frame; latency: ${options.paced} events at 20/s, sentAt embedded in the event, sampled on every 10th client`,
      `${options.rounds} interleaved rounds (alternating order), medians; the 2-core box runs server and 1 000 clients at once, so both sides share the same client-side limit`,
    ],
    figures: [
      { label: "product throughput", value: median(product), unit: "deliveries/s" },
      { label: "bare ws throughput", value: median(bare), unit: "deliveries/s" },
      { label: "product latency p50", value: percentile(productLatencies, 50), unit: "ms" },
      { label: "product latency p99", value: p99, unit: "ms" },
      { label: "bare latency p50", value: percentile(bareLatencies, 50), unit: "ms" },
      { label: "bare latency p99", value: percentile(bareLatencies, 99), unit: "ms" },
      { label: "product frames lost (clients closed as slow)", value: lost, unit: "" },
    ],
    checks: [
      atLeast("throughput vs bare ws", ratio, 0.8, "×"),
      atMost("p99 delivery latency", p99, 25, " ms"),
    ],
  };
}

/** Bench entry: 1 000 clients. */
export function main(args: readonly string[] = []): Promise<BenchResult> {
  const quick = args.includes("--quick");
  return runWsFanoutBench({
    clients: 1_000,
    burst: quick ? 100 : 200,
    paced: quick ? 40 : 100,
    rounds: quick ? 1 : 2,
  });
}

if (import.meta.url === `file://${process.argv[1]}`) printResult(await main(process.argv.slice(2)));
