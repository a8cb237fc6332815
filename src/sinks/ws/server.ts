// The subscriber WebSocket server (DESIGN §4): upgrade on the daemon's HTTP server, fan-out, heartbeat, shutdown.
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { childLogger } from "../../logger.js";
import WebSocket, { WebSocketServer } from "ws";
import type { ServerConfig } from "../../config/types.js";
import type { BusEvent } from "../../domain/events.js";
import { createAccessPolicy, type AccessPolicy } from "../../http/access.js";
import type { Metrics } from "../../metrics.js";
import type { EventSource } from "../../pipeline/event-hub.js";
import { EMPTY_FILTER } from "./filter.js";
import { createEventEncoder, encodeFrame } from "./frames.js";
import { PROTOCOL_VERSION } from "./protocol.js";
import { handleMessage, type RequestContext } from "./requests.js";
import { CLOSE_GOING_AWAY, createSession, heartbeatDue, type Session } from "./session.js";
import { createSessionIndex, type SessionIndex } from "./session-index.js";
import { createTickBatch, type TickBatch } from "./tick-batch.js";
import { createUpgradeGate, refuse } from "./upgrade.js";

/** What the WebSocket server takes from the composition root. */
export interface WsServerOptions {
  readonly server: Server;
  readonly path: string;
  readonly source: EventSource;
  readonly config: ServerConfig;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly knownPairs: () => ReadonlySet<string>;
  readonly knownRules: () => ReadonlySet<string>;
  readonly version: string;
  /** Host and Origin rules (default: built from `config`; the daemon shares one with its HTTP handler). */
  readonly access?: AccessPolicy;
  /** Clock for rate limiting (monotonic by default). */
  readonly nowMs?: () => number;
}

/** The running WebSocket server. */
export interface WsServer {
  clientCount(): number;
  /** Close every client with 1001, terminate those still open after `deadlineMs`, detach from the HTTP server. */
  close(deadlineMs: number): Promise<void>;
}

/** Attach the WebSocket API to `server` at `path` and start fanning out `source` events. */
export function createWsServer(options: WsServerOptions): WsServer {
  const { server, path, source, config, metrics, logger } = options;
  const nowMs = options.nowMs ?? (() => performance.now());
  const access = options.access ?? createAccessPolicy(config);
  const gate = createUpgradeGate({ config, access, metrics, logger, nowMs });
  const encodeEvent = createEventEncoder();
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: config.maxMessageBytes,
    clientTracking: false,
    // explicit: a permessage-deflate context per socket costs hundreds of KB of zlib memory (1 000 clients)
    perMessageDeflate: false,
  });
  const sessions = new Set<Session>();
  const index = createSessionIndex<Session>();
  const prices = priceDemand(source, index);
  const requests: RequestContext = {
    source,
    metrics,
    encodeEvent,
    nowMs,
    known: () => ({ pairs: options.knownPairs(), rules: options.knownRules() }),
  };
  let nextId = 1;
  let closing: Promise<void> | null = null;

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const url = new URL(request.url ?? "/", "http://localhost");
    if (url.pathname !== path) {
      // another upgrade handler may own this path; answer only when we are alone
      if (server.listenerCount("upgrade") === 1)
        refuse(socket, 404, "not_found", "no WebSocket endpoint here");
      return;
    }
    if (!gate.admit(request, socket, url, { closing: closing !== null, clients: sessions.size })) return;
    wss.handleUpgrade(request, socket, head, (ws) =>
      accept(
        { options, sessions, requests, nowMs, index, prices },
        { ws, stream: socket },
        request,
        nextId++,
      ),
    );
  };
  const batch = createTickBatch();
  const subscription = source.events$.subscribe({
    next: (event) => fanOut({ index, batch, encodeEvent, metrics }, event),
  });
  const heartbeat = setInterval(() => beat(sessions, source.lastSeq(), metrics), config.heartbeatMs);
  heartbeat.unref();
  server.on("upgrade", onUpgrade);

  const shutdown = async (deadlineMs: number): Promise<void> => {
    clearInterval(heartbeat);
    gate.close();
    subscription.unsubscribe();
    await closeSessions(sessions, deadlineMs, logger);
    prices.release();
    server.off("upgrade", onUpgrade);
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    metrics.wsClients.set(0);
  };
  return {
    clientCount: () => sessions.size,
    close(deadlineMs) {
      closing ??= shutdown(deadlineMs);
      return closing;
    },
  };
}

/** Start serving an upgraded connection: its session, its handlers, and the `hello` frame. */
function accept(
  server: {
    readonly options: WsServerOptions;
    readonly sessions: Set<Session>;
    readonly requests: RequestContext;
    readonly nowMs: () => number;
    readonly index: SessionIndex<Session>;
    readonly prices: PriceDemand;
  },
  connection: { readonly ws: WebSocket; readonly stream: Duplex },
  request: IncomingMessage,
  id: number,
): void {
  const { options, sessions, index, prices } = server;
  const { ws, stream } = connection;
  const { config, metrics, source } = options;
  const session = createSession({
    id,
    socket: ws,
    stream,
    logger: childLogger(options.logger, { client: id, remote: request.socket.remoteAddress }),
    metrics,
    maxBufferedBytes: config.maxBufferedBytes,
    messagesPerSecond: config.messagesPerSecond,
    startMs: server.nowMs(),
    lastSeq: source.lastSeq(),
    onFilterChange: (changed, previous) => {
      // a change after the close (none is expected) must not list a gone session again
      if (!sessions.has(changed)) return;
      index.move(changed, previous, changed.filter);
      prices.sync();
    },
  });
  sessions.add(session);
  metrics.wsClients.set(sessions.size);
  ws.on("message", (data, isBinary) => {
    try {
      handleMessage(server.requests, session, toBuffer(data), isBinary);
    } catch (error) {
      // a bug here must not take the daemon down with it
      session.logger.error({ err: error }, "failed to handle a WebSocket message");
      session.close(1011, "internal error");
    }
  });
  ws.on("pong", () => {
    session.alive = true;
  });
  ws.on("error", (error: Error & { code?: string }) => {
    if (error.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") metrics.wsRejected.inc({ reason: "too_large" });
    session.logger.debug({ err: error }, "WebSocket client error");
  });
  ws.on("close", (code) => {
    sessions.delete(session);
    index.move(session, session.filter, EMPTY_FILTER);
    prices.sync();
    metrics.wsClients.set(sessions.size);
    session.logger.debug({ code }, "WebSocket client disconnected");
  });
  session.reply({
    type: "hello",
    protocol: PROTOCOL_VERSION,
    version: options.version,
    seq: source.lastSeq(),
    heartbeatMs: config.heartbeatMs,
  });
  session.logger.debug("WebSocket client connected");
}

/**
 * Send `event` to every session whose filter matches (the index visits no other), framed once for all of them;
 * after the first event of a tick, the writes wait for the tick's end (tick-batch.ts).
 */
function fanOut(
  fan: {
    readonly index: SessionIndex<Session>;
    readonly batch: TickBatch;
    readonly encodeEvent: RequestContext["encodeEvent"];
    readonly metrics: Metrics;
  },
  event: BusEvent,
): void {
  const { index, batch, encodeEvent, metrics } = fan;
  let frame: Buffer | undefined;
  let sent = 0;
  const seq = event.type === "price" ? null : event.seq;
  let hold: boolean | undefined;
  index.forEachMatching(event, (session) => {
    frame ??= encodeEvent(event);
    // an event no session takes does not count as the tick's first
    hold ??= batch.startEvent();
    if (hold) batch.hold(session.stream);
    if (!session.send(frame)) return;
    sent += 1;
    if (seq !== null) session.toldSeq = seq;
  });
  // counted once per event, not per client
  if (sent > 0) metrics.wsMessagesOut.inc({ type: event.type }, sent);
}

/** The server's hold on the hub's price events: taken while a session subscribes to prices, released when none does. */
interface PriceDemand {
  /** Take or release the hold to match the sessions on the `prices` channel now. */
  sync(): void;
  /** Release the hold (shutdown). */
  release(): void;
}

function priceDemand(source: EventSource, index: SessionIndex<Session>): PriceDemand {
  let release: (() => void) | null = null;
  const demand: PriceDemand = {
    sync() {
      const wanted = index.sessionsOn("prices") > 0;
      if (wanted && release === null) release = source.wantPrices();
      else if (!wanted) demand.release();
    },
    release() {
      release?.();
      release = null;
    },
  };
  return demand;
}

/** One heartbeat tick: terminate peers that missed the last pong, ping the others, tell idle ones the seq. */
function beat(sessions: ReadonlySet<Session>, lastSeq: number, metrics: Metrics): void {
  // one buffer per tick for every client that gets the heartbeat frame
  let frame: Buffer | undefined;
  let beats = 0;
  for (const session of sessions) {
    if (!session.alive) {
      session.logger.info("terminating WebSocket client that missed a heartbeat");
      metrics.wsRejected.inc({ reason: "heartbeat" });
      session.socket.terminate();
      continue;
    }
    session.alive = false;
    if (session.socket.readyState === WebSocket.OPEN) session.socket.ping();
    // a quiet client, or one whose filter skipped newer events, learns the seq it can resume from
    if (heartbeatDue(session, lastSeq)) {
      frame ??= encodeFrame({ type: "heartbeat", seq: lastSeq });
      if (session.send(frame)) {
        session.toldSeq = lastSeq;
        beats += 1;
      }
    }
    session.sentInPeriod = false;
  }
  if (beats > 0) metrics.wsMessagesOut.inc({ type: "heartbeat" }, beats);
}

/** Close every session with 1001; terminate those still open after `deadlineMs` (ws does not close them). */
async function closeSessions(
  sessions: ReadonlySet<Session>,
  deadlineMs: number,
  logger: Logger,
): Promise<void> {
  const closed = [...sessions].map(
    (session) =>
      new Promise<void>((resolve) => {
        if (session.socket.readyState === WebSocket.CLOSED) return resolve();
        session.socket.once("close", () => resolve());
        session.close(CLOSE_GOING_AWAY, "server shutting down");
      }),
  );
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"deadline">((resolve) => {
    timer = setTimeout(() => resolve("deadline"), deadlineMs);
  });
  const outcome = await Promise.race([Promise.all(closed), deadline]);
  clearTimeout(timer);
  if (outcome === "deadline") {
    logger.warn({ clients: sessions.size }, "terminating WebSocket clients still open at the deadline");
    for (const session of sessions) session.socket.terminate();
    await Promise.all(closed);
  }
}

/** ws hands text and binary data as Buffer, ArrayBuffer or fragments depending on binaryType. */
function toBuffer(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
