// Test harness: a real hub + journal + HTTP server + WebSocket server on 127.0.0.1:0, and event-driven ws clients.
import type { Server } from "node:http";
import pino, { type Logger } from "pino";
import { Registry } from "prom-client";
import WebSocket from "ws";
import type { ServerConfig } from "../../../src/config/types.js";
import type { AlertPayload, PriceTick, RuleKind, Severity } from "../../../src/domain/events.js";
import { createAccessPolicy } from "../../../src/http/access.js";
import { createHttpServer, listen } from "../../../src/http/server.js";
import { createMetrics, type Metrics } from "../../../src/metrics.js";
import { createEventHub, type EventHub } from "../../../src/pipeline/event-hub.js";
import { createJournal } from "../../../src/state/journal.js";
import { createWsServer, type WsServer } from "../../../src/sinks/ws/server.js";

export const PAIRS = ["BTC/USD", "ETH/USD", "SOL/USD"];
export const RULES = ["price_change", "stale_price", "upstream_error", "vault_status"];

export const baseConfig: ServerConfig = {
  host: "127.0.0.1",
  port: 0,
  externalUrl: "",
  token: "",
  allowedHosts: [],
  allowedOrigins: [],
  metricsToken: "",
  heartbeatMs: 30_000,
  maxClients: 50,
  maxConnections: 10_000,
  maxMessageBytes: 64 * 1024,
  messagesPerSecond: 50,
  maxBufferedBytes: 4 * 1024 * 1024,
  journalSize: 1000,
};

export interface Harness {
  readonly hub: EventHub;
  readonly metrics: Metrics;
  readonly ws: WsServer;
  readonly http: Server;
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** Start a full server; `nowMs` drives rate limiting when a test wants to control it. */
export async function startHarness(
  overrides: Partial<ServerConfig> = {},
  extra: {
    readonly nowMs?: () => number;
    readonly logger?: Logger;
    readonly rules?: readonly string[];
  } = {},
): Promise<Harness> {
  const config = { ...baseConfig, ...overrides };
  const metrics = createMetrics(new Registry(), { collectProcess: false });
  const hub = createEventHub({
    journal: createJournal(config.journalSize),
    nowMs: () => Date.parse("2026-11-22T10:00:00.000Z"),
    version: "9.9.9",
  });
  const logger = extra.logger ?? pino({ level: "silent" });
  const access = createAccessPolicy(config);
  const http = createHttpServer({
    metrics,
    readiness: () => ({ ready: true, reasons: [] }),
    logger,
    access,
    maxConnections: 10_000,
    nowMs: Date.now,
  });
  const ws = createWsServer({
    server: http,
    path: "/ws",
    source: hub,
    config,
    access,
    metrics,
    logger,
    knownPairs: () => new Set(PAIRS),
    knownRules: () => new Set(extra.rules ?? RULES),
    version: "9.9.9",
    ...(extra.nowMs === undefined ? {} : { nowMs: extra.nowMs }),
  });
  const { port } = await listen(http, "127.0.0.1", 0);
  return {
    hub,
    metrics,
    ws,
    http,
    port,
    url: `ws://127.0.0.1:${port}/ws`,
    async close() {
      await ws.close(1000);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** A parsed server frame. */
export type Frame = Record<string, unknown> & { readonly type: string };

/** A ws client that records every frame and lets a test await the next one matching a predicate. */
export class TestClient {
  readonly frames: Frame[] = [];
  readonly raw: string[] = [];
  private cursor = 0;
  private waiters: (() => void)[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly opened: Promise<void>;

  constructor(readonly socket: WebSocket) {
    socket.on("message", (data: Buffer) => {
      const text = data.toString("utf8");
      this.raw.push(text);
      this.frames.push(JSON.parse(text) as Frame);
      this.wake();
    });
    this.closed = new Promise((resolve) =>
      socket.on("close", (code, reason) => {
        resolve({ code, reason: reason.toString() });
        this.wake();
      }),
    );
    this.opened = new Promise((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    this.opened.catch(() => undefined);
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** The next frame after the previous `next` that satisfies `predicate` (skipping others). */
  async next(predicate: (frame: Frame) => boolean = () => true, timeoutMs = 3_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (this.cursor < this.frames.length) {
        const frame = this.frames[this.cursor++]!;
        if (predicate(frame)) return frame;
      }
      if (this.socket.readyState === WebSocket.CLOSED)
        throw new Error("socket closed while waiting for a frame");
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) throw new Error(`timed out; frames so far: ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remainingMs);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Send a request and await the reply carrying its id. */
  async request(message: Record<string, unknown>): Promise<Frame> {
    this.socket.send(JSON.stringify(message));
    return this.next((frame) => frame["id"] === message["id"]);
  }

  send(message: Record<string, unknown> | string): void {
    this.socket.send(typeof message === "string" ? message : JSON.stringify(message));
  }

  close(): void {
    this.socket.close();
  }
}

/** Connect and wait for `hello`. */
export async function connect(url: string, options: WebSocket.ClientOptions = {}): Promise<TestClient> {
  const client = new TestClient(new WebSocket(url, options));
  await client.opened;
  await client.next((frame) => frame.type === "hello");
  return client;
}

/** The HTTP status of a WebSocket upgrade: 101 when accepted (the socket is closed again), else the refusal's. */
export function upgradeStatus(url: string, options: WebSocket.ClientOptions = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, options);
    socket.on("unexpected-response", (_request, response) => {
      resolve(response.statusCode ?? 0);
      response.resume();
      socket.terminate();
    });
    socket.on("open", () => {
      resolve(101);
      socket.close();
    });
    socket.on("error", reject);
  });
}

/** Expect the upgrade to be refused; resolves with the HTTP status. */
export async function refusedStatus(url: string, options: WebSocket.ClientOptions = {}): Promise<number> {
  const status = await upgradeStatus(url, options);
  if (status === 101) throw new Error("connection was accepted");
  return status;
}

let counter = 0;
/** An alert payload with sensible defaults. */
export function alert(
  overrides: {
    pair?: string;
    rule?: RuleKind;
    severity?: Severity;
    status?: "firing" | "resolved";
    summary?: string;
    fingerprint?: string;
  } = {},
): AlertPayload {
  counter += 1;
  const pair = overrides.pair ?? "BTC/USD";
  const rule = overrides.rule ?? "price_change";
  const status = overrides.status ?? "firing";
  return {
    fingerprint: overrides.fingerprint ?? `fp-${rule}-${pair}-${counter}`,
    status,
    rule,
    severity: overrides.severity ?? "warning",
    labels: { pair, market: "offchain" },
    summary: overrides.summary ?? `${pair} moved`,
    value: 0.05,
    threshold: 0.02,
    startsAt: "2026-11-22T10:00:03.120Z",
    endsAt: status === "resolved" ? "2026-11-22T10:05:03.120Z" : null,
    reason: status === "resolved" ? "resolved" : "first",
    context: {},
  };
}

/** A price tick for a pair. */
export function tick(pair: string, price = "100.00"): PriceTick {
  return {
    pair,
    market: "offchain",
    target: `offchain:${pair}`,
    price,
    numSources: 5,
    timestamp: "2026-11-22T10:00:00.000Z",
    observedAt: "2026-11-22T10:00:00.100Z",
  };
}

/** Publish `tick` as the pipeline does (the hub builds it only when someone wants prices). */
export function publishTick(hub: EventHub, price: PriceTick): void {
  hub.publishPrice(price.target, () => price);
}

/** Current value of a counter or gauge (summing every label set matching `labels`). */
export async function metricValue(
  metric: { get(): Promise<{ values: { value: number; labels: Record<string, unknown> }[] }> },
  labels: Record<string, string> = {},
): Promise<number> {
  const { values } = await metric.get();
  return values
    .filter((value) => Object.entries(labels).every(([key, want]) => value.labels[key] === want))
    .reduce((sum, value) => sum + value.value, 0);
}

/** Wait until a condition on server-side state holds, checking on each turn of the event loop. */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setImmediate(resolve));
  }
}
