// The subscriber WebSocket server (DESIGN §4): upgrade on the daemon's HTTP server, fan-out, heartbeat, shutdown.
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { childLogger } from "../../logger.js";
import WebSocket, { WebSocketServer } from "ws";
import type { ServerConfig } from "../../config/types.js";
import type { BusEvent } from "../../domain/events.js";
import { createAccessPolicy, type AccessPolicy } from "../../http/access.js";
import { createBurstLog } from "../../log-burst.js";
import type { Metrics } from "../../metrics.js";
import type { EventSource } from "../../pipeline/event-hub.js";
import { presentedToken, createTokenCheck } from "./auth.js";
import { matchesEvent, type SubscriptionFilter } from "./filter.js";
import { createEventEncoder, encodeFrame } from "./frames.js";
import { PROTOCOL_VERSION } from "./protocol.js";
import { handleMessage, type RequestContext } from "./requests.js";
import { CLOSE_GOING_AWAY, createSession, heartbeatDue, type Session } from "./session.js";

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

export interface WsServer {
  clientCount(): number;
  /** Close every client with 1001, terminate those still open after `deadlineMs`, detach from the HTTP server. */
  close(deadlineMs: number): Promise<void>;
}

/** Attach the WebSocket API to `server` at `path` and start fanning out `source` events. */
export function createWsServer(options: WsServerOptions): WsServer {
  const { server, path, source, config, metrics } = options;
  const { logger } = options;
  const nowMs = options.nowMs ?? (() => performance.now());
  const checkToken = createTokenCheck(config.token);
  const access = options.access ?? createAccessPolicy(config);
  // refusals repeat under attack: one line per burst with a count, never one per attempt
  const refusedAccess = createBurstLog({
    logger,
    nowMs,
    message: "refused WebSocket upgrade",
    windowMs: 10_000,
  });
  const refusedAuth = createBurstLog({
    logger,
    nowMs,
    message: "refused WebSocket upgrade: missing or wrong token",
    windowMs: 10_000,
  });
  const encodeEvent = createEventEncoder();
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: config.maxMessageBytes,
    clientTracking: false,
    // explicit: a permessage-deflate context per socket costs hundreds of KB of zlib memory (1 000 clients)
    perMessageDeflate: false,
  });
  const sessions = new Set<Session>();
  const context: RequestContext = {
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
    if (closing !== null) {
      metrics.wsRejected.inc({ reason: "shutting_down" });
      return refuse(socket, 503, "shutting_down", "server is shutting down");
    }
    const refusal = access.check(request);
    if (refusal !== null) {
      metrics.wsRejected.inc({ reason: refusal });
      refusedAccess.note({
        reason: refusal,
        host: request.headers.host,
        origin: request.headers.origin,
        remote: request.socket.remoteAddress,
      });
      const what = refusal === "host" ? "Host header" : "Origin";
      return refuse(socket, 403, `forbidden_${refusal}`, `${what} not allowed`);
    }
    if (!checkToken(presentedToken(request, url))) {
      metrics.wsRejected.inc({ reason: "unauthorized" });
      refusedAuth.note({ remote: request.socket.remoteAddress });
      return refuse(socket, 401, "unauthorized", "a valid bearer token is required");
    }
    if (sessions.size >= config.maxClients) {
      metrics.wsRejected.inc({ reason: "max_clients" });
      logger.warn({ maxClients: config.maxClients }, "refusing WebSocket client: too many clients");
      return refuse(socket, 503, "max_clients", "too many clients");
    }
    wss.handleUpgrade(request, socket, head, (ws) => accept(ws, request));
  };

  const accept = (ws: WebSocket, request: IncomingMessage): void => {
    const id = nextId++;
    const session = createSession({
      id,
      socket: ws,
      logger: childLogger(logger, { client: id, remote: request.socket.remoteAddress }),
      metrics,
      maxBufferedBytes: config.maxBufferedBytes,
      messagesPerSecond: config.messagesPerSecond,
      startMs: nowMs(),
      lastSeq: source.lastSeq(),
    });
    sessions.add(session);
    metrics.wsClients.set(sessions.size);
    ws.on("message", (data, isBinary) => {
      try {
        handleMessage(context, session, toBuffer(data), isBinary);
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
  };

  const fanOut = (event: BusEvent): void => {
    let frame: Buffer | undefined;
    let sent = 0;
    const seq = event.type === "price" ? null : event.seq;
    // filters are interned, so clients with identical filters share one evaluation per event
    let lastFilter: SubscriptionFilter | null = null;
    let matches = false;
    for (const session of sessions) {
      if (session.filter !== lastFilter) {
        lastFilter = session.filter;
        matches = matchesEvent(lastFilter, event);
      }
      if (!matches) continue;
      frame ??= encodeEvent(event);
      if (!session.send(frame)) continue;
      sent += 1;
      if (seq !== null) session.toldSeq = seq;
    }
    // counted once per event, not per client
    if (sent > 0) metrics.wsMessagesOut.inc({ type: event.type }, sent);
  };
  const subscription = source.events$.subscribe({ next: fanOut });

  const heartbeat = setInterval(() => {
    const lastSeq = source.lastSeq();
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
  }, config.heartbeatMs);
  heartbeat.unref();

  server.on("upgrade", onUpgrade);

  return {
    clientCount: () => sessions.size,
    close(deadlineMs) {
      closing ??= shutdown(deadlineMs);
      return closing;
    },
  };

  async function shutdown(deadlineMs: number): Promise<void> {
    clearInterval(heartbeat);
    refusedAccess.close();
    refusedAuth.close();
    subscription.unsubscribe();
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
    server.off("upgrade", onUpgrade);
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    metrics.wsClients.set(0);
  }
}

/** Answer a refused upgrade with a small JSON HTTP response and close the socket. */
function refuse(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: code, message });
  const reason =
    { 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 503: "Service Unavailable" }[status] ??
    "Error";
  const auth = status === 401 ? 'WWW-Authenticate: Bearer realm="pragma-monitor"\r\n' : "";
  socket.on("error", () => socket.destroy());
  socket.once("finish", () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json\r\n${auth}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** ws hands text and binary data as Buffer, ArrayBuffer or fragments depending on binaryType. */
function toBuffer(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
