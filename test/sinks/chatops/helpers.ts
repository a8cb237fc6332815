// Test fixtures for the chat-ops sinks: alerts, sink configs, a manual clock, an HTTP receiver and a bus.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import pino, { type Logger } from "pino";
import { Registry } from "prom-client";
import { Subject } from "rxjs";
import type { AlertSinkConfig, SinkCommonConfig } from "../../../src/config/types.js";
import type { AlertEvent, AlertPayload, BusEvent } from "../../../src/domain/events.js";
import { createMetrics, type Metrics } from "../../../src/metrics.js";
import type { EventSource } from "../../../src/pipeline/event-hub.js";

/** A firing price_change alert, overridable. */
export function makeAlert(overrides: Partial<AlertPayload> = {}): AlertPayload {
  return {
    fingerprint: "9f2c41d0a7b3e6f1",
    status: "firing",
    rule: "price_change",
    severity: "critical",
    labels: { pair: "BTC/USD", market: "offchain", entry_type: "spot", window: "1min" },
    summary: "BTC/USD moved +5.02% in 1min (threshold 2%)",
    value: 0.0502,
    threshold: 0.02,
    startsAt: "2026-11-22T10:00:03.120Z",
    endsAt: null,
    reason: "first",
    context: { price: "86184.12", previous: "82069.27", observedAt: "2026-11-22T10:00:03.000Z" },
    ...overrides,
  };
}

/** The resolved transition of `alert`, `firedMs` after it started. */
export function resolvedOf(alert: AlertPayload, firedMs = 303_000): AlertPayload {
  const endsAt = new Date(Date.parse(alert.startsAt) + firedMs).toISOString();
  return { ...alert, status: "resolved", reason: "resolved", endsAt };
}

export function makeEvent(seq: number, alert: AlertPayload = makeAlert()): AlertEvent {
  return { type: "alert", seq, alert };
}

/** Alert number `i`, with its own pair and fingerprint. */
export function nthAlert(i: number, overrides: Partial<AlertPayload> = {}): AlertPayload {
  const pair = `T${i}/USD`;
  return makeAlert({
    fingerprint: `fp${String(i).padStart(14, "0")}`,
    labels: { pair, market: "offchain" },
    summary: `${pair} moved`,
    ...overrides,
  });
}

const COMMON: SinkCommonConfig = {
  name: "test",
  // grouping off unless a test turns it on: one notification per transition, at once
  groupBy: ["..."],
  groupWaitMs: 0,
  groupIntervalMs: 0,
  repeatIntervalMs: 0,
  enabled: true,
  rules: [],
  pairs: [],
  labels: {},
  minSeverity: "info",
  sendResolved: true,
  ratePerMinute: 6000,
  burst: 100,
  // Long by default: tests move a manual clock while real requests are in flight.
  timeoutMs: 600_000,
  maxAgeMs: 3_600_000,
  failureThreshold: 3,
};

/** A sink config of `kind` pointing at `url`, with test-friendly defaults. */
export function sinkOf(
  kind: AlertSinkConfig["kind"],
  url: string,
  overrides: Partial<SinkCommonConfig> = {},
): AlertSinkConfig {
  const common = { ...COMMON, name: kind, ...overrides };
  switch (kind) {
    case "slack":
    case "discord":
      return { ...common, kind, url };
    case "telegram":
      return { ...common, kind, url, botToken: "123456:SECRET-BOT-TOKEN", chatId: "-10042" };
    case "pagerduty":
      return { ...common, kind, url, routingKey: "SECRET-ROUTING-KEY-0123456789abcdef" };
    case "alertmanager":
      return { ...common, kind, url, resendIntervalMs: 60_000 };
    case "webhook":
      return { ...common, kind, url, secret: "whsec-SECRET" };
  }
}

/** Virtual time: timers fire only when `advance` moves the clock past them. */
export interface ManualClock {
  nowMs(): number;
  setTimer(callback: () => void, delayMs: number): unknown;
  clearTimer(handle: unknown): void;
  advance(ms: number): Promise<void>;
  pendingTimers(): number;
}

export function createManualClock(startMs = Date.parse("2026-11-22T10:00:00.000Z")): ManualClock {
  let now = startMs;
  let nextId = 0;
  const timers = new Map<number, { atMs: number; callback: () => void }>();
  return {
    nowMs: () => now,
    setTimer(callback, delayMs) {
      const id = ++nextId;
      timers.set(id, { atMs: now + Math.max(0, delayMs), callback });
      return id;
    },
    clearTimer(handle) {
      timers.delete(handle as number);
    },
    async advance(ms) {
      const target = now + ms;
      for (;;) {
        const due = [...timers.entries()]
          .filter(([, t]) => t.atMs <= target)
          .sort((a, b) => a[1].atMs - b[1].atMs || a[0] - b[0])[0];
        if (due === undefined) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].atMs);
        due[1].callback();
        await settle();
      }
      now = target;
      await settle();
    },
    pendingTimers: () => timers.size,
  };
}

/** Let promises and I/O callbacks run. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** What the receiver answers: a status (with headers/body) or "hang" to never answer. */
export type Reply = { status: number; headers?: Record<string, string>; body?: string } | "hang";

export interface Receiver {
  readonly url: string;
  readonly requests: ReceivedRequest[];
  /** Replies used in order; when empty, `fallback` answers. */
  readonly replies: Reply[];
  fallback: Reply;
  /** Per-request override, consulted before `replies`. */
  route: ((request: ReceivedRequest) => Reply | undefined) | undefined;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1:0 that records every request. */
export async function startReceiver(): Promise<Receiver> {
  const hanging = new Set<ServerResponse>();
  const receiver: Omit<Receiver, "url" | "close"> = {
    requests: [],
    replies: [],
    fallback: { status: 200, body: "ok" },
    route: undefined,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      receiver.requests.push(request);
      const reply = receiver.route?.(request) ?? receiver.replies.shift() ?? receiver.fallback;
      if (reply === "hang") {
        hanging.add(res);
        return;
      }
      res.writeHead(reply.status, reply.headers ?? {});
      res.end(reply.body ?? "");
    });
  });
  server.keepAliveTimeout = 50;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

/** A minimal EventSource over a Subject, with a settable firing set (one carrying silencedBy was never notified). */
export function createTestSource(
  active: AlertPayload[] = [],
): EventSource & { publish(event: BusEvent): void } {
  const subject = new Subject<BusEvent>();
  return {
    events$: subject.asObservable(),
    lastSeq: () => 0,
    oldestSeq: () => 1,
    replay: () => ({ gap: null, events: [] }),
    activeAlerts: () => active,
    latestPrices: () => [],
    // as the hub after a restart that found every announcement of a firing muted
    wasNotified: (fingerprint) =>
      (active.find((alert) => alert.fingerprint === fingerprint)?.silencedBy ?? []).length === 0,
    publish: (event) => subject.next(event),
  };
}

/** A pino logger whose lines are collected as parsed objects and raw text. */
export function captureLogger(): { logger: Logger; lines: Record<string, unknown>[]; text: () => string } {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      raw.push(chunk.toString("utf8"));
      callback();
    },
  });
  const logger = pino({ level: "debug" }, stream);
  return {
    logger,
    get lines() {
      return raw
        .join("")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    text: () => raw.join(""),
  };
}

export function testMetrics(): Metrics {
  return createMetrics(new Registry(), { collectProcess: false });
}

/** Current value of a counter/gauge for the given labels (0 when unset). */
export async function metricValue(
  metric: { get(): Promise<{ values: { labels: Record<string, unknown>; value: number }[] }> },
  labels: Record<string, string>,
): Promise<number> {
  const { values } = await metric.get();
  const match = values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return match?.value ?? 0;
}
