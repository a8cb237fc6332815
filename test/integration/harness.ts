// Integration harness: runs the real daemon (createApp + embedded simulator, HTTP/WebSocket on 127.0.0.1:0) and waits on its bus and logs.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { expect } from "vitest";
import { createApp, type App, type StopReport } from "../../src/app.js";
import { loadConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/logger.js";
import type { AppConfig } from "../../src/config/types.js";
import type { AlertEvent, AlertPayload, BusEvent, JournaledEvent } from "../../src/domain/events.js";
import { alertMessage } from "../../src/sinks/log-sink.js";

/** A JSON object as written in a config or scenario file. */
export type JsonObject = { readonly [key: string]: unknown };

/** One parsed pino line. */
export interface LogLine {
  readonly level: number;
  readonly time: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

/** pino's numeric levels. */
export const LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;

/**
 * Base of every test config: embedded simulator without a scenario, no candle warm-up, one attempt per
 * poll (so failures count at once), short backoff, nothing monitored, grouping off; tests add monitors and rules.
 */
const BASE_CONFIG: JsonObject = {
  upstream: {
    url: "simulator",
    timeoutMs: 2_000,
    retry: { maxAttempts: 1, maxElapsedMs: 1_000 },
    simulator: { seed: 42, scenario: "", speed: 1 },
  },
  monitors: { jitter: 0.1, maxBackoffMs: 400, warmup: { enabled: false } },
  rules: [],
  sinks: [],
  // one notification per transition, at once: the tests that group say so (grouping.test.ts)
  grouping: { groupBy: ["..."] },
  log: { level: "debug" },
};

/** Objects merge key by key, everything else (arrays included) replaces, as config layers do. */
function merge(base: JsonObject, layer: JsonObject): JsonObject {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(layer)) {
    const previous = out[key];
    out[key] = isObject(previous) && isObject(value) ? merge(previous, value) : value;
  }
  return out;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Write `layer` over the base config into `dir` and load it through the real loader (port 0, state in `dir`). */
export function buildConfig(layer: JsonObject, dir: string): AppConfig {
  const file = join(dir, "config.json");
  writeFileSync(file, JSON.stringify(merge(BASE_CONFIG, layer)));
  return loadConfig({
    env: {},
    configFile: file,
    defaultFile: null,
    argvOverrides: { "server.port": "0", "state.dir": join(dir, "state") },
  }).config;
}

/** A fresh temp directory for one daemon (config, scenario files, state). */
export function makeTempDir(): string {
  return mkdtempSync(join(tmpdir(), "pm-integration-"));
}

/** Collects pino's JSON lines in memory and lets a test await one. */
export class LogCapture {
  readonly lines: LogLine[] = [];
  /** Every line exactly as pino wrote it (JSON.parse hides a repeated key; the raw text does not). */
  readonly raw: string[] = [];
  private waiters: (() => void)[] = [];

  /** pino destination: one call per JSON line. */
  write(chunk: string): void {
    for (const text of chunk.split("\n")) {
      if (text.trim() === "") continue;
      this.raw.push(text);
      this.lines.push(JSON.parse(text) as LogLine);
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** The first line (past or future) matching `predicate`. */
  async waitFor(predicate: (line: LogLine) => boolean, timeoutMs: number, what: string): Promise<LogLine> {
    const deadline = Date.now() + timeoutMs;
    for (let scanned = 0; ;) {
      for (; scanned < this.lines.length; scanned++) {
        const line = this.lines[scanned]!;
        if (predicate(line)) return line;
      }
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for log line: ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remainingMs);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

/** The status of one request to 127.0.0.1:`port` with exactly these headers (Host and Origin included). */
export function rawStatus(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body = "",
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method, path, headers, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Plain HTTP to 127.0.0.1 on a fresh connection (no pooled sockets outlive the test). */
export function http(
  method: string,
  url: string,
  body?: unknown,
): Promise<{ readonly status: number; readonly headers: Record<string, unknown>; readonly text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(
      url,
      {
        method,
        agent: false,
        headers: payload === undefined ? {} : { "content-type": "application/json" },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** A running daemon under test. */
export interface TestApp {
  readonly app: App;
  readonly config: AppConfig;
  readonly logs: LogCapture;
  readonly port: number;
  /** http://127.0.0.1:PORT of /healthz, /readyz, /metrics. */
  readonly httpUrl: string;
  readonly wsUrl: string;
  /** When start() resolved (ms, wall clock). */
  readonly startedAtMs: number;
  /** The first bus event (journaled or future) matching `predicate`. */
  waitForEvent(predicate: (event: BusEvent) => boolean, timeoutMs: number, what: string): Promise<BusEvent>;
  /** The first alert event (journaled or future) matching `predicate`. */
  waitForAlert(
    predicate: (event: AlertEvent) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<AlertEvent>;
  /** Every journaled alert event so far, in seq order. */
  alertEvents(): readonly AlertEvent[];
  /** Inject a fault through the simulator's control endpoint; returns its id. */
  injectFault(fault: JsonObject, options?: { readonly durationMs?: number }): Promise<string>;
  /** Remove an injected fault through the control endpoint. */
  removeFault(id: string): Promise<void>;
  /** Stop the daemon (once) and remove its temp dir; resolves with the daemon's stop report. */
  stop(): Promise<StopReport>;
}

/**
 * Build the config from `layer` (or from a function of the daemon's temp dir, to place scenario files
 * there), start the daemon with an in-memory logger, and return its handles.
 */
export async function startTestApp(layer: JsonObject | ((dir: string) => JsonObject)): Promise<TestApp> {
  const dir = makeTempDir();
  let config: AppConfig;
  try {
    config = buildConfig(typeof layer === "function" ? layer(dir) : layer, dir);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return startAppWithConfig(config, { dir });
}

/** Start the daemon on an already loaded config; `dir` (if given) is removed on stop. */
export async function startAppWithConfig(
  config: AppConfig,
  options: {
    readonly dir?: string;
    /** Log through the daemon's own factory (src/logger.ts: base bindings, redaction, ISO time) instead of bare pino. */
    readonly productionLogger?: boolean;
  } = {},
): Promise<TestApp> {
  const logs = new LogCapture();
  const logger =
    options.productionLogger === true
      ? await createLogger({ ...config.log, pretty: false }, logs)
      : pino({ level: config.log.level }, logs);
  const app = createApp({
    config,
    logger,
    nowMs: Date.now,
    random: Math.random,
  });
  let stopped = false;
  const stop = async (): Promise<StopReport> => {
    if (stopped) return { failedSteps: [] };
    stopped = true;
    const report = await app.stop(3_000);
    if (options.dir !== undefined) rmSync(options.dir, { recursive: true, force: true });
    return report;
  };
  let port: number;
  try {
    ({ port } = await app.start());
  } catch (error) {
    await stop();
    throw error;
  }
  const startedAtMs = Date.now();

  const journaled = (): readonly JournaledEvent[] => app.events.replay(0).events;
  const alertEvents = (): readonly AlertEvent[] =>
    journaled().filter((event): event is AlertEvent => event.type === "alert");

  const waitForEvent = (
    predicate: (event: BusEvent) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<BusEvent> => {
    // The journal first: an alert may fire while the test is still awaiting the fault injection reply.
    // Scanning and subscribing happen in one synchronous step, so nothing can slip between them.
    const past = journaled().find(predicate);
    if (past !== undefined) return Promise.resolve(past);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        subscription.unsubscribe();
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}; alerts so far: ${describeAlerts(alertEvents())}`,
          ),
        );
      }, timeoutMs);
      const subscription = app.events.events$.subscribe({
        next: (event) => {
          if (!predicate(event)) return;
          clearTimeout(timer);
          subscription.unsubscribe();
          resolve(event);
        },
        complete: () => {
          clearTimeout(timer);
          reject(new Error(`event bus completed while waiting for ${what}`));
        },
      });
    });
  };

  return {
    app,
    config,
    logs,
    port,
    httpUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/ws`,
    startedAtMs,
    waitForEvent,
    async waitForAlert(predicate, timeoutMs, what) {
      const event = await waitForEvent((e) => e.type === "alert" && predicate(e), timeoutMs, what);
      return event as AlertEvent;
    },
    alertEvents,
    async injectFault(fault, injectOptions = {}) {
      const response = await http("POST", `${app.upstreamUrl()}/_sim/faults`, { fault, ...injectOptions });
      if (response.status !== 201) throw new Error(`fault refused (${response.status}): ${response.text}`);
      return (JSON.parse(response.text) as { id: string }).id;
    },
    async removeFault(id) {
      const response = await http("DELETE", `${app.upstreamUrl()}/_sim/faults/${encodeURIComponent(id)}`);
      if (response.status !== 204) throw new Error(`fault ${id} not removed (${response.status})`);
    },
    stop,
  };
}

/** One line per alert event, for failure messages. */
export function describeAlerts(events: readonly AlertEvent[]): string {
  if (events.length === 0) return "(none)";
  return events
    .map((e) => `#${e.seq} ${e.alert.status} ${e.alert.rule} ${JSON.stringify(e.alert.labels)}`)
    .join("; ");
}

/** The shape a test compares: what changed, on which rule and labels, and why. */
export function transitionOf(event: AlertEvent): {
  readonly rule: AlertPayload["rule"];
  readonly status: AlertPayload["status"];
  readonly reason: AlertPayload["reason"];
  readonly labels: AlertPayload["labels"];
} {
  const { rule, status, reason, labels } = event.alert;
  return { rule, status, reason, labels };
}

/** The stdout sink wrote exactly one line per journaled alert, at the level its severity asks for. */
export function expectOneLogLinePerTransition(t: TestApp): void {
  const lines = t.logs.lines.filter((line) => line["component"] === "alerts" && line["event"] === "alert");
  const events = t.alertEvents();
  expect(lines.map((line) => line["seq"])).toEqual(events.map((e) => e.seq));
  for (const [index, event] of events.entries()) {
    const line = lines[index]!;
    const { alert } = event;
    const level =
      alert.status === "resolved"
        ? LEVEL.info
        : { info: LEVEL.info, warning: LEVEL.warn, critical: LEVEL.error }[alert.severity];
    expect(line.level, `log level of seq ${event.seq}`).toBe(level);
    expect(line.msg).toBe(alertMessage(alert));
    expect(line["alert"]).toEqual(alert);
  }
}
