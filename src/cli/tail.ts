// `pragma-monitor tail`: a live terminal view of the WebSocket API that reconnects and resumes with `since`.
import WebSocket from "ws";
import { TAIL_RECONNECT_BACKOFF, delayMs, type BackoffPolicy } from "../backoff.js";
import {
  type AlertEvent,
  type AlertPayload,
  type LifecycleEvent,
  type PriceEvent,
} from "../domain/events.js";
import { EX_NOPERM, EX_USAGE } from "./args.js";
import { TAIL_FLAGS, parseTailArgs, type TailOptions } from "./tail-args.js";
import { flagList, synopsis } from "./usage.js";
import {
  formatActiveLine,
  formatAlertLine,
  formatConnectedLine,
  formatGapLine,
  formatIdleLine,
  formatLifecycleLine,
  formatPriceLine,
  nextIdleNoticeMs,
} from "./tail-format.js";

const USAGE = `${synopsis("tail", TAIL_FLAGS, "usage: ")}
${flagList(TAIL_FLAGS)}
The token defaults to $PM_SERVER_TOKEN. Exit codes: 0 on Ctrl-C, ${EX_USAGE} usage error or a filter the server
refuses (an unknown pair or rule), ${EX_NOPERM} token refused.`;

export interface TailIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly isTTY: boolean;
  /** Aborting stops the tail with exit 0 (main.ts aborts it on SIGINT). */
  readonly signal: AbortSignal;
}

/** What the client reports to its owner. */
export type TailOutput =
  /** `parent`: the firing alert a child's `causedBy` names, when tail knows it. */
  | {
      readonly kind: "event";
      readonly raw: string;
      readonly event: AlertEvent | LifecycleEvent | PriceEvent;
      readonly parent?: AlertPayload | undefined;
    }
  | { readonly kind: "gap"; readonly raw: string; readonly from: number; readonly to: number }
  /** Subscribed: the alerts firing now; `resumedAfterSeq` when reconnecting with `since` (the replay follows). */
  | {
      readonly kind: "connected";
      readonly raw: string;
      readonly url: string;
      readonly active: readonly AlertPayload[];
      readonly resumedAfterSeq: number | null;
    }
  /** Connected, but nothing to show for `idleMs`; `firing` alerts match the filter. */
  | { readonly kind: "idle"; readonly url: string; readonly idleMs: number; readonly firing: number }
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
  readonly backoff?: BackoffPolicy;
  /** Idle notices: the first after `firstMs` without an event, then twice as long each time, at most `maxMs`. */
  readonly idleNotice?: { readonly firstMs: number; readonly maxMs: number };
}

/** A timer that reports how long nothing happened, at growing intervals, until restarted or stopped. */
function createIdleTimer(
  schedule: { readonly firstMs: number; readonly maxMs: number },
  onIdle: (idleMs: number) => void,
): { restart(): void; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const arm = (previousMs: number | null, idleMs: number): void => {
    const delayMs = nextIdleNoticeMs(previousMs, schedule);
    timer = setTimeout(() => {
      onIdle(idleMs + delayMs);
      arm(delayMs, idleMs + delayMs);
    }, delayMs);
  };
  return {
    restart() {
      clearTimeout(timer);
      arm(null, 0);
    },
    stop: () => clearTimeout(timer),
  };
}

/**
 * What tail knows between frames: the alerts firing now that match the filter (`active` on subscribe, then every
 * transition), whether this is a reconnection, and the idle notices, restarted by every event shown.
 */
function createTailView(
  url: string,
  output: (output: TailOutput) => void,
  idleNotice: { readonly firstMs: number; readonly maxMs: number },
) {
  const firing = new Map<string, AlertPayload>();
  let connectedBefore = false;
  const idle = createIdleTimer(idleNotice, (idleMs) =>
    output({ kind: "idle", url, idleMs, firing: firing.size }),
  );
  return {
    /** A `subscribed` reply; `since` is what the subscription asked to replay after. */
    subscribed(raw: string, frame: Readonly<Record<string, unknown>>, since: number | null): void {
      const active = Array.isArray(frame["active"]) ? (frame["active"] as AlertPayload[]) : [];
      firing.clear();
      for (const alert of active) firing.set(alert.fingerprint, alert);
      output({ kind: "connected", raw, url, active, resumedAfterSeq: connectedBefore ? since : null });
      connectedBefore = true;
      idle.restart();
    },
    event(raw: string, event: AlertEvent | LifecycleEvent | PriceEvent): void {
      if (event.type === "alert") {
        const { causedBy } = event.alert;
        const parent = causedBy === undefined ? undefined : firing.get(causedBy);
        if (event.alert.status === "firing") firing.set(event.alert.fingerprint, event.alert);
        else firing.delete(event.alert.fingerprint);
        output({ kind: "event", raw, event, parent });
      } else output({ kind: "event", raw, event });
      idle.restart();
    },
    /** Disconnected or stopped: no idle notice until subscribed again. */
    pause: () => idle.stop(),
  };
}

/** What survives reconnections: the resume point, the backoff, the live socket and the timers. */
interface TailSession {
  /** The last seq shown (or vouched for by a heartbeat): a reconnection resumes after it. */
  lastSeq: number | null;
  /** Failed connections since the last answered subscribe. */
  attempt: number;
  requestId: number;
  stopped: boolean;
  socket: WebSocket | null;
  reconnectTimer: NodeJS.Timeout | undefined;
  watchdog: NodeJS.Timeout | undefined;
}

/** What one connection knows: the subscribe it sent, whether it was answered, and why not to reconnect. */
interface TailConnection {
  readonly ws: WebSocket;
  /** The exit code when the server refused us for good (a bad token or filter). */
  fatal: number | null;
  subscribeId: string;
  subscribedSince: number | null;
  /** A heartbeat's seq speaks of the filter only once the subscribe is answered on this connection. */
  subscribed: boolean;
  /** No frame nor ping for this long: the connection is half-open (two missed heartbeats); 0 = unknown. */
  silenceMs: number;
}

/** Everything the connection steps share. */
interface TailContext {
  readonly options: TailOptions;
  readonly output: (output: TailOutput) => void;
  readonly view: ReturnType<typeof createTailView>;
  readonly session: TailSession;
  readonly createSocket: (url: string, headers: Record<string, string>) => WebSocket;
  readonly random: () => number;
  readonly backoff: BackoffPolicy;
  readonly finish: (code: number) => void;
}

/** Connect, subscribe, and on every disconnect reconnect with backoff + jitter, resuming after the last seq seen. */
export function createTailClient(client: TailClientOptions): TailClient {
  const { options } = client;
  const session: TailSession = {
    lastSeq: options.since,
    attempt: 0,
    requestId: 0,
    stopped: false,
    socket: null,
    reconnectTimer: undefined,
    watchdog: undefined,
  };
  const view = createTailView(
    options.url,
    client.output,
    client.idleNotice ?? { firstMs: 60_000, maxMs: 600_000 },
  );
  let finish: (code: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => {
    finish = (code) => {
      session.stopped = true;
      clearTimeout(session.reconnectTimer);
      clearTimeout(session.watchdog);
      view.pause();
      resolve(code);
    };
  });
  const context: TailContext = {
    options,
    output: client.output,
    view,
    session,
    createSocket: client.createSocket ?? ((url, headers) => new WebSocket(url, { headers })),
    random: client.random ?? Math.random,
    backoff: client.backoff ?? TAIL_RECONNECT_BACKOFF,
    finish: (code) => finish(code),
  };
  connect(context);
  return {
    done,
    stop() {
      if (session.stopped) return;
      session.stopped = true;
      clearTimeout(session.reconnectTimer);
      if (session.socket === null) finish(0);
      else session.socket.close(1000);
    },
  };
}

/** Open one connection and wire its events; its close decides: finish, or reconnect after a backoff. */
function connect(context: TailContext): void {
  const { options, output, session } = context;
  const headers: Record<string, string> =
    options.token === "" ? {} : { Authorization: `Bearer ${options.token}` };
  const ws = context.createSocket(options.url, headers);
  session.socket = ws;
  const conn: TailConnection = {
    ws,
    fatal: null,
    subscribeId: "",
    subscribedSince: null,
    subscribed: false,
    silenceMs: 0,
  };
  ws.on("ping", () => feedWatchdog(session, conn));
  ws.on("message", (data: Buffer) => {
    feedWatchdog(session, conn);
    onFrame(context, conn, data.toString("utf8"));
  });
  ws.on("error", (error) => {
    if (/Unexpected server response: 401/.test(error.message)) {
      conn.fatal = EX_NOPERM;
      output({ kind: "notice", text: "unauthorized: check --token or $PM_SERVER_TOKEN" });
    } else output({ kind: "notice", text: `connection error: ${error.message}` });
  });
  ws.on("close", (code) => {
    clearTimeout(session.watchdog);
    context.view.pause();
    session.socket = null;
    if (session.stopped) return context.finish(0);
    if (conn.fatal !== null) return context.finish(conn.fatal);
    session.attempt += 1;
    const waitMs = delayMs(context.backoff, session.attempt, context.random);
    output({ kind: "notice", text: `disconnected (${code}); reconnecting in ${waitMs} ms` });
    session.reconnectTimer = setTimeout(() => connect(context), waitMs);
  });
}

/**
 * The resume point after a frame (what a reconnection asks to replay after), and whether a journaled event is
 * new. A fresh subscribe starts from the server's seq; a replayed event at or before the resume point was shown
 * before the reconnect; a heartbeat or pong vouches that every matching event up to its seq was sent, but only
 * once our subscribe is answered (a sparse filter then never sees a false gap once the events it skipped leave
 * the journal).
 */
export function resumeAfter(
  lastSeq: number | null,
  frame: { readonly type?: unknown; readonly seq?: unknown },
  conn: { readonly subscribed: boolean; readonly subscribedSince: number | null },
): { readonly lastSeq: number | null; readonly show: boolean } {
  const seq = typeof frame.seq === "number" ? frame.seq : null;
  const advances = seq !== null && (lastSeq === null || seq > lastSeq);
  switch (frame.type) {
    case "subscribed":
      return { lastSeq: conn.subscribedSince === null && seq !== null ? seq : lastSeq, show: true };
    case "alert":
    case "lifecycle":
      return { lastSeq: advances ? seq : lastSeq, show: advances || seq === null };
    case "heartbeat":
    case "pong":
      return { lastSeq: conn.subscribed && advances ? seq : lastSeq, show: false };
    default:
      return { lastSeq, show: true };
  }
}

/** Any sign of life restarts the watchdog: a half-open connection never closes by itself. */
function feedWatchdog(session: TailSession, conn: TailConnection): void {
  clearTimeout(session.watchdog);
  if (conn.silenceMs > 0) session.watchdog = setTimeout(() => conn.ws.terminate(), conn.silenceMs);
}

/** Send the subscribe of our filter, replaying after `since` when set. */
function subscribe(context: TailContext, conn: TailConnection, since: number | null): void {
  const { options } = context;
  conn.subscribeId = String(++context.session.requestId);
  conn.subscribedSince = since;
  const channels = ["alerts", "lifecycle", ...(options.prices ? ["prices"] : [])];
  const message = {
    op: "subscribe",
    id: conn.subscribeId,
    channels,
    ...(options.pairs.length > 0 ? { pairs: options.pairs } : {}),
    ...(options.rules.length > 0 ? { rules: options.rules } : {}),
    ...(options.minSeverity === null ? {} : { minSeverity: options.minSeverity }),
    ...(since === null ? {} : { since }),
  };
  conn.ws.send(JSON.stringify(message));
}

/** One frame from the server: show it, advance the resume point, or answer it. */
function onFrame(context: TailContext, conn: TailConnection, raw: string): void {
  const { output, session, view } = context;
  let frame: { type?: unknown } & Record<string, unknown>;
  try {
    frame = JSON.parse(raw) as typeof frame;
  } catch {
    return output({ kind: "notice", text: "ignoring a frame that is not JSON" });
  }
  switch (frame.type) {
    case "hello":
      conn.silenceMs = typeof frame["heartbeatMs"] === "number" ? frame["heartbeatMs"] * 2 + 1_000 : 0;
      feedWatchdog(session, conn);
      return subscribe(context, conn, session.lastSeq);
    case "subscribed":
      session.attempt = 0;
      conn.subscribed = true;
      session.lastSeq = resumeAfter(session.lastSeq, frame, conn).lastSeq;
      return view.subscribed(raw, frame, conn.subscribedSince);
    case "alert":
    case "lifecycle": {
      const next = resumeAfter(session.lastSeq, frame, conn);
      if (!next.show) return; // already shown before a reconnect
      session.lastSeq = next.lastSeq;
      return view.event(raw, frame as unknown as AlertEvent | LifecycleEvent);
    }
    case "price":
      return view.event(raw, frame as unknown as PriceEvent);
    case "heartbeat":
    case "pong":
      session.lastSeq = resumeAfter(session.lastSeq, frame, conn).lastSeq;
      return;
    case "gap":
      return output({ kind: "gap", raw, from: frame["from"] as number, to: frame["to"] as number });
    case "error":
      return onServerError(context, conn, frame);
    default:
      return;
  }
}

/** An error frame: a notice; on our subscribe, retry without `since` when that was the trouble, else give up. */
function onServerError(
  context: TailContext,
  conn: TailConnection,
  frame: Readonly<Record<string, unknown>>,
): void {
  const text = `server error ${String(frame["code"])}: ${String(frame["message"])}`;
  if (frame["id"] !== conn.subscribeId) return context.output({ kind: "notice", text });
  if (conn.subscribedSince !== null && /since/.test(String(frame["message"]))) {
    context.output({ kind: "notice", text: `${text}; cannot resume, continuing live` });
    return subscribe(context, conn, null);
  }
  conn.fatal = EX_USAGE; // the server refused the filter (an unknown pair or rule): a usage error
  context.output({ kind: "notice", text });
  conn.ws.close(1000);
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
    return EX_USAGE;
  }
  const { options } = parsed;
  const color = io.isTTY && !options.json && io.env["NO_COLOR"] === undefined;
  const client = createTailClient({
    options,
    output: (out) => writeOutput(out, io, { json: options.json, color }),
  });
  const stop = (): void => client.stop();
  io.signal.addEventListener("abort", stop, { once: true });
  try {
    return await client.done;
  } finally {
    io.signal.removeEventListener("abort", stop);
  }
}

/** Where each output goes: notices on stderr; events (raw frames with --json) and the firing alerts on stdout. */
function writeOutput(
  out: TailOutput,
  io: TailIo,
  mode: { readonly json: boolean; readonly color: boolean },
): void {
  const notice = (text: string) => void io.stderr.write(`tail: ${text}\n`);
  switch (out.kind) {
    case "notice":
      return notice(out.text);
    case "idle":
      return notice(formatIdleLine(out.url, out.idleMs, out.firing));
    case "connected":
      notice(formatConnectedLine(out.url, out.active.length, out.resumedAfterSeq));
      // after a resume the replay brings what changed; a fresh subscription shows the state it starts from
      if (out.resumedAfterSeq !== null) return;
      if (mode.json) io.stdout.write(`${out.raw}\n`);
      else {
        const byFingerprint = new Map(out.active.map((alert) => [alert.fingerprint, alert]));
        for (const alert of out.active) {
          const parent = alert.causedBy === undefined ? undefined : byFingerprint.get(alert.causedBy);
          io.stdout.write(`${formatActiveLine(alert, { color: mode.color, parent })}\n`);
        }
      }
      return;
    case "gap":
      if (mode.json) io.stdout.write(`${out.raw}\n`);
      else notice(formatGapLine(out.from, out.to));
      return;
    case "event":
      io.stdout.write(`${mode.json ? out.raw : formatEvent(out.event, mode.color, out.parent)}\n`);
      return;
  }
}

function formatEvent(
  event: AlertEvent | LifecycleEvent | PriceEvent,
  color: boolean,
  parent: AlertPayload | undefined,
): string {
  switch (event.type) {
    case "alert":
      return formatAlertLine(event, { color, parent });
    case "lifecycle":
      return formatLifecycleLine(event, { color });
    case "price":
      return formatPriceLine(event, { color });
  }
}
