// `pragma-monitor tail`: a live terminal view of the WebSocket API that reconnects and resumes with `since`.
import { parseArgs } from "node:util";
import WebSocket from "ws";
import {
  SEVERITIES,
  type AlertEvent,
  type LifecycleEvent,
  type PriceEvent,
  type Severity,
} from "../domain/events.js";

export const DEFAULT_URL = "ws://127.0.0.1:8787/ws";
const USAGE = `usage: pragma-monitor tail [--url ws://127.0.0.1:8787/ws] [--token T] [--pairs BTC/USD,...]
       [--rules price_change,...] [--min-severity info|warning|critical] [--since N] [--json] [--prices]
The token defaults to $PM_SERVER_TOKEN. Exit codes: 0 on SIGINT, 2 usage or refused subscription, 3 unauthorized.`;

export interface TailIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly isTTY: boolean;
  /** Aborting stops the tail with exit 0 (main.ts aborts it on SIGINT). */
  readonly signal: AbortSignal;
}

export interface TailOptions {
  readonly url: string;
  readonly token: string;
  readonly pairs: readonly string[];
  readonly rules: readonly string[];
  readonly minSeverity: Severity | null;
  readonly since: number | null;
  readonly json: boolean;
  readonly prices: boolean;
}

/** Parse `tail` arguments (those after the command name) into options, or a usage error. */
export function parseTailArgs(
  argv: readonly string[],
  env: TailIo["env"],
): { readonly ok: true; readonly options: TailOptions } | { readonly ok: false; readonly message: string } {
  try {
    const { values } = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        url: { type: "string", default: DEFAULT_URL },
        token: { type: "string" },
        pairs: { type: "string" },
        rules: { type: "string" },
        "min-severity": { type: "string" },
        since: { type: "string" },
        json: { type: "boolean", default: false },
        prices: { type: "boolean", default: false },
      },
    });
    if (!/^wss?:\/\//.test(values.url)) return { ok: false, message: `--url must be ws:// or wss://` };
    const severity = values["min-severity"];
    if (severity !== undefined && !(SEVERITIES as readonly string[]).includes(severity))
      return { ok: false, message: `--min-severity must be one of ${SEVERITIES.join(", ")}` };
    const since = values.since === undefined ? null : Number(values.since);
    if (since !== null && !(Number.isSafeInteger(since) && since >= 0))
      return { ok: false, message: "--since must be a non-negative integer seq" };
    const list = (text: string | undefined): string[] =>
      text === undefined
        ? []
        : text
            .split(",")
            .map((item) => item.trim())
            .filter((item) => item !== "");
    return {
      ok: true,
      options: {
        url: values.url,
        token: values.token ?? env["PM_SERVER_TOKEN"] ?? "",
        pairs: list(values.pairs),
        rules: list(values.rules),
        minSeverity: (severity as Severity | undefined) ?? null,
        since,
        json: values.json,
        prices: values.prices,
      },
    };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

const ANSI = { red: 31, green: 32, yellow: 33, cyan: 36, dim: 2 } as const;
const paint = (text: string, code: number, color: boolean): string =>
  color ? `\x1b[${code}m${text}\x1b[0m` : text;
/** Server text is untrusted: strip control characters so it cannot drive the terminal. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const clean = (text: string): string => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
const SEVERITY_COLOR: Readonly<Record<Severity, number>> = {
  critical: ANSI.red,
  warning: ANSI.yellow,
  info: ANSI.cyan,
};

/** One line for an alert: time, seq, status and severity (coloured), rule, labels, summary. */
export function formatAlertLine(event: AlertEvent, options: { readonly color: boolean }): string {
  const { alert } = event;
  const resolved = alert.status === "resolved";
  const at = resolved ? (alert.endsAt ?? alert.startsAt) : alert.startsAt;
  const status = `${resolved ? "RESOLVED" : "FIRING"} ${alert.severity}`;
  const labels = Object.entries(alert.labels)
    .map(([key, value]) => `${clean(key)}=${/[\s"=]/.test(value) ? JSON.stringify(value) : clean(value)}`)
    .join(" ");
  const repeat = alert.reason === "repeat" ? " (repeat)" : "";
  return [
    paint(`${clean(at)} #${event.seq}`, ANSI.dim, options.color),
    paint(status, resolved ? ANSI.green : SEVERITY_COLOR[alert.severity], options.color),
    `${alert.rule}${repeat}`,
    ...(labels === "" ? [] : [labels]),
    `— ${clean(alert.summary)}`,
  ].join(" ");
}

/** One line for a lifecycle event (daemon started, reloaded, stopping). */
export function formatLifecycleLine(event: LifecycleEvent, options: { readonly color: boolean }): string {
  return `${paint(`${clean(event.at)} #${event.seq}`, ANSI.dim, options.color)} daemon ${event.event} (v${clean(event.version)})`;
}

/** One line for a price tick. */
export function formatPriceLine(event: PriceEvent, options: { readonly color: boolean }): string {
  const { tick } = event;
  const where = [tick.market, tick.network, tick.entryType].filter((part) => part !== undefined).join(" ");
  return `${paint(clean(tick.observedAt), ANSI.dim, options.color)} ${clean(tick.pair)} ${clean(tick.price)} (${clean(where)}, ${tick.numSources} sources)`;
}

/** The notice printed when the server no longer holds events the tail missed. */
export function formatGapLine(from: number, to: number): string {
  return `gap: events #${from}..#${to} are no longer held by the server and were missed`;
}

/** What the client reports to its owner. */
export type TailOutput =
  | { readonly kind: "event"; readonly raw: string; readonly event: AlertEvent | LifecycleEvent | PriceEvent }
  | { readonly kind: "gap"; readonly raw: string; readonly from: number; readonly to: number }
  | { readonly kind: "notice"; readonly text: string };

export interface TailClient {
  /** Resolves with the exit code once stopped or failed for good. */
  readonly done: Promise<number>;
  stop(): void;
}

export interface TailClientOptions {
  readonly options: TailOptions;
  readonly output: (output: TailOutput) => void;
  readonly createSocket?: (url: string, headers: Record<string, string>) => WebSocket;
  readonly random?: () => number;
  readonly backoff?: { readonly baseMs: number; readonly maxMs: number };
}

/** Connect, subscribe, and on every disconnect reconnect with backoff + jitter, resuming after the last seq seen. */
export function createTailClient(client: TailClientOptions): TailClient {
  const { options, output } = client;
  const createSocket = client.createSocket ?? ((url, headers) => new WebSocket(url, { headers }));
  const random = client.random ?? Math.random;
  const { baseMs, maxMs } = client.backoff ?? { baseMs: 250, maxMs: 30_000 };
  let lastSeq: number | null = options.since;
  let attempt = 0;
  let requestId = 0;
  let stopped = false;
  let socket: WebSocket | null = null;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let watchdog: NodeJS.Timeout | undefined;
  let finish: (code: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => {
    finish = (code) => {
      stopped = true;
      clearTimeout(reconnectTimer);
      clearTimeout(watchdog);
      resolve(code);
    };
  });

  const connect = (): void => {
    const headers: Record<string, string> =
      options.token === "" ? {} : { Authorization: `Bearer ${options.token}` };
    const ws = createSocket(options.url, headers);
    socket = ws;
    let fatal: number | null = null;
    let subscribeId = "";
    let subscribedSince: number | null = null;
    // a heartbeat's seq speaks of the filter only once the subscribe is answered on this connection
    let subscribed = false;
    let silenceMs = 0;
    const feedWatchdog = (): void => {
      // a half-open connection never closes by itself: give up after two missed heartbeats
      clearTimeout(watchdog);
      if (silenceMs > 0) watchdog = setTimeout(() => ws.terminate(), silenceMs);
    };
    const subscribe = (since: number | null): void => {
      subscribeId = String(++requestId);
      subscribedSince = since;
      const channels = ["alerts", "lifecycle", ...(options.prices ? ["prices"] : [])];
      const message = {
        op: "subscribe",
        id: subscribeId,
        channels,
        ...(options.pairs.length > 0 ? { pairs: options.pairs } : {}),
        ...(options.rules.length > 0 ? { rules: options.rules } : {}),
        ...(options.minSeverity === null ? {} : { minSeverity: options.minSeverity }),
        ...(since === null ? {} : { since }),
      };
      ws.send(JSON.stringify(message));
    };
    ws.on("ping", feedWatchdog);
    ws.on("message", (data: Buffer) => {
      feedWatchdog();
      const raw = data.toString("utf8");
      let frame: { type?: unknown } & Record<string, unknown>;
      try {
        frame = JSON.parse(raw) as typeof frame;
      } catch {
        return output({ kind: "notice", text: "ignoring a frame that is not JSON" });
      }
      switch (frame.type) {
        case "hello":
          silenceMs = typeof frame["heartbeatMs"] === "number" ? frame["heartbeatMs"] * 2 + 1_000 : 0;
          feedWatchdog();
          return subscribe(lastSeq);
        case "subscribed":
          attempt = 0;
          subscribed = true;
          if (subscribedSince === null && typeof frame["seq"] === "number") lastSeq = frame["seq"];
          return;
        case "alert":
        case "lifecycle": {
          const seq = frame["seq"] as number;
          if (lastSeq !== null && seq <= lastSeq) return; // already shown before a reconnect
          lastSeq = seq;
          return output({ kind: "event", raw, event: frame as unknown as AlertEvent | LifecycleEvent });
        }
        case "price":
          return output({ kind: "event", raw, event: frame as unknown as PriceEvent });
        case "heartbeat":
        case "pong": {
          // every matching event up to this seq was sent: resume after it (a sparse filter then never sees
          // a false gap once the events it skipped leave the journal)
          const seq = frame["seq"];
          if (subscribed && typeof seq === "number" && (lastSeq === null || seq > lastSeq)) lastSeq = seq;
          return;
        }
        case "gap":
          return output({ kind: "gap", raw, from: frame["from"] as number, to: frame["to"] as number });
        case "error": {
          const text = `server error ${String(frame["code"])}: ${String(frame["message"])}`;
          if (frame["id"] !== subscribeId) return output({ kind: "notice", text });
          if (subscribedSince !== null && /since/.test(String(frame["message"]))) {
            output({ kind: "notice", text: `${text}; cannot resume, continuing live` });
            return subscribe(null);
          }
          fatal = 2;
          output({ kind: "notice", text });
          return ws.close(1000);
        }
        default:
          return;
      }
    });
    ws.on("error", (error) => {
      if (/Unexpected server response: 401/.test(error.message)) {
        fatal = 3;
        output({ kind: "notice", text: "unauthorized: check --token or $PM_SERVER_TOKEN" });
      } else output({ kind: "notice", text: `connection error: ${error.message}` });
    });
    ws.on("close", (code) => {
      clearTimeout(watchdog);
      socket = null;
      if (stopped) return finish(0);
      if (fatal !== null) return finish(fatal);
      const delayMs = Math.round(random() * Math.min(maxMs, baseMs * 2 ** attempt));
      attempt += 1;
      output({ kind: "notice", text: `disconnected (${code}); reconnecting in ${delayMs} ms` });
      reconnectTimer = setTimeout(connect, delayMs);
    });
  };

  connect();
  return {
    done,
    stop() {
      if (stopped) return;
      stopped = true;
      clearTimeout(reconnectTimer);
      if (socket === null) finish(0);
      else socket.close(1000);
    },
  };
}

/** Run `pragma-monitor tail`; resolves with the process exit code. */
export async function runTail(argv: readonly string[], io: TailIo): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const parsed = parseTailArgs(argv, io.env);
  if (!parsed.ok) {
    io.stderr.write(`tail: ${parsed.message}\n${USAGE}\n`);
    return 2;
  }
  const { options } = parsed;
  const color = io.isTTY && !options.json && io.env["NO_COLOR"] === undefined;
  const client = createTailClient({
    options,
    output: (out) => {
      if (out.kind === "notice") io.stderr.write(`tail: ${out.text}\n`);
      else if (options.json) io.stdout.write(`${out.raw}\n`);
      else if (out.kind === "gap") io.stderr.write(`tail: ${formatGapLine(out.from, out.to)}\n`);
      else io.stdout.write(`${formatEvent(out.event, color)}\n`);
    },
  });
  const stop = (): void => client.stop();
  io.signal.addEventListener("abort", stop, { once: true });
  try {
    return await client.done;
  } finally {
    io.signal.removeEventListener("abort", stop);
  }
}

function formatEvent(event: AlertEvent | LifecycleEvent | PriceEvent, color: boolean): string {
  switch (event.type) {
    case "alert":
      return formatAlertLine(event, { color });
    case "lifecycle":
      return formatLifecycleLine(event, { color });
    case "price":
      return formatPriceLine(event, { color });
  }
}
