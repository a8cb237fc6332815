// The daemon's HTTP endpoints: /healthz (alive), /readyz (ready to serve), /metrics (Prometheus text), the /api/v1 routes
// and the status page (`/`, `/assets/`).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Logger } from "pino";
import type { Readiness } from "../domain/readiness.js";
import type { Metrics } from "../metrics.js";
import { errorCode, PmError } from "../domain/errors.js";
import { redactUrl } from "../config/redact.js";
import { createBurstLog } from "../log-burst.js";
import { createTokenCheck, presentedToken } from "../sinks/ws/auth.js";
import type { AccessPolicy } from "./access.js";
import type { ApiHandler } from "./api/router.js";
import { API_PREFIX } from "./api/openapi.js";
import { isStatusPagePath, serveStatusPage, type StatusPage } from "./status-page.js";

export interface HttpServerOptions {
  readonly metrics: Metrics;
  readonly readiness: () => Readiness;
  readonly logger: Logger;
  /** Host rule applied to every request (the WebSocket upgrade applies the same policy). */
  readonly access: AccessPolicy;
  /** Bearer token required on /metrics ("" or absent = open). */
  readonly metricsToken?: string;
  /** Concurrent connections (HTTP and upgraded WebSocket) beyond which new ones are closed at once. */
  readonly maxConnections: number;
  /** Clock of the /metrics render cache. */
  readonly nowMs: () => number;
  /** The operator API under /api/v1/ (absent: those paths answer 404 like any unknown one). */
  readonly api?: ApiHandler;
  /** The status page at `/` and its files under /assets/ (absent: those paths answer 404 like any unknown one). */
  readonly statusPage?: StatusPage;
}

/**
 * Limits that keep a flood of requests from stalling the loop or growing memory (issue 15 §1). Node parses
 * pipelined requests eagerly but stops reading a socket whose unsent responses pass its high-water mark
 * (a client that does not read its answers is not read from), so each handler must answer without awaiting
 * per-request work: hence the shared /metrics render (before it, each pipelined scrape rendered the whole
 * registry and waited, and 4 × 20 000 of them froze the loop for 34 s). A connection's `maxRequestsPerSocket`-th
 * answer says `Connection: close` and the connection closes once it is written (HTTP/1.0 keep-alive too, which
 * node's own count skips); requests pipelined past it are not answered (a client retries those on a new connection). Node alone only sets that header: it kept the socket until
 * keep-alive ended (6 s) and answered further requests 503, each restarting that timer, so a client ignoring the
 * header held the connection for as long as it sent one every few seconds. Every close after a last answer lingers
 * (`closeLingering`, at most `lingerMs`) so that a client pipelining far past the limit gets all its answers, not a
 * reset that loses the last of them. A connection is also closed as
 * soon as more than `maxWaitingPerSocket` of its requests wait for an answer (pipelined scrapes); headers must arrive
 * within `headersTimeoutMs`, the whole request within `requestTimeoutMs`, checked every `timeoutCheckMs` (node's
 * default check, every 30 s, let a silent connection live 30 s, not 10).
 */
export const HTTP_LIMITS = {
  maxRequestsPerSocket: 1_000,
  /** Requests of one connection that may wait for their answer at once; one more closes the connection. */
  maxWaitingPerSocket: 32,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  /** How often the two timeouts above are checked: they hold to within this. */
  timeoutCheckMs: 1_000,
  // short keep-alive so shutdown is not held up by idle scrapers
  keepAliveTimeoutMs: 5_000,
  /** How long a closing connection keeps reading (and dropping) input after its last answer, for the client to close. */
  lingerMs: 2_000,
  /** Scrapes within this long share one render: a /metrics flood costs one render per second, not one per request. */
  metricsCacheMs: 1_000,
} as const;

/** Create the HTTP server (not listening yet); the WebSocket API attaches to its `upgrade` event. */
export function createHttpServer(options: HttpServerOptions): Server {
  const { logger } = options;
  const metricsAuthorized = createTokenCheck(options.metricsToken ?? "");
  const refusedHosts = createBurstLog({
    logger,
    nowMs: options.nowMs,
    message: "refused HTTP request: Host not allowed",
    windowMs: 10_000,
  });
  const renderMetrics = createMetricsCache(options.metrics, options.nowMs, HTTP_LIMITS.metricsCacheMs);
  const refusedConnections = createBurstLog({
    logger,
    nowMs: options.nowMs,
    message: "refused HTTP connection: server.maxConnections reached",
    windowMs: 10_000,
  });
  const refusedPipelining = createBurstLog({
    logger,
    nowMs: options.nowMs,
    message: "closed HTTP connection: too many pipelined requests waiting for their answer",
    windowMs: 10_000,
  });
  /** Requests of each connection whose answer is still being prepared (pipelined scrapes). */
  const waitingBySocket = new WeakMap<Socket, number>();
  const admit = createRequestLimit(HTTP_LIMITS.maxRequestsPerSocket);
  const server = createServer(
    {
      headersTimeout: HTTP_LIMITS.headersTimeoutMs,
      requestTimeout: HTTP_LIMITS.requestTimeoutMs,
      connectionsCheckingInterval: HTTP_LIMITS.timeoutCheckMs,
      keepAliveTimeout: HTTP_LIMITS.keepAliveTimeoutMs,
    },
    (request, response) => {
      const { socket } = request;
      if (!admit(request, response)) return;
      if (!options.access.hostAllowed(request)) {
        options.metrics.httpRejected.inc({ reason: "host" });
        refusedHosts.note({ host: request.headers.host, remote: request.socket.remoteAddress });
        return sendJson(response, 403, { error: "forbidden_host", message: "Host header not allowed" });
      }
      // the rest of a pipelined chunk still parsed after we closed its connection: nobody to answer
      if (socket.destroyed) return;
      const waiting = waitingBySocket.get(socket) ?? 0;
      if (waiting >= HTTP_LIMITS.maxWaitingPerSocket) {
        // a client pipelining scrapes without reading the answers: each one would hold a render's bytes
        options.metrics.httpRejected.inc({ reason: "pipelining" });
        refusedPipelining.note({ waiting, remote: socket.remoteAddress });
        socket.destroy();
        return;
      }
      const answered = route(options, metricsAuthorized, renderMetrics, request, response).catch(
        (error: unknown) => {
          logger.error({ err: error, url: redactUrl(request.url ?? "/") }, "HTTP handler failed");
          if (!response.headersSent) sendJson(response, 500, { error: "internal_error" });
          else response.destroy();
        },
      );
      // only answers that wait (a /metrics render) count: the others were written synchronously
      if (response.writableEnded) return;
      waitingBySocket.set(socket, waiting + 1);
      void answered.finally(() => waitingBySocket.set(socket, (waitingBySocket.get(socket) ?? 1) - 1));
    },
  );
  applyRequestLimit(server, admit);
  server.maxConnections = options.maxConnections;
  // node closes the socket itself; count it and say so, once per burst
  server.on("drop", (data?: { remoteAddress?: string }) => {
    options.metrics.httpRejected.inc({ reason: "max_connections" });
    refusedConnections.note({ maxConnections: options.maxConnections, remote: data?.remoteAddress });
  });
  server.once("close", () => {
    refusedHosts.close();
    refusedConnections.close();
    refusedPipelining.close();
  });
  return server;
}

/**
 * Node's side of the per-connection request limit: its own count and the requests it answers without a handler (417),
 * and a lingering close once the last answer is written.
 */
function applyRequestLimit(
  server: Server,
  admit: (request: IncomingMessage, response: ServerResponse) => boolean,
): void {
  // node then runs no handler for the HTTP/1.1 requests pipelined past the limit (its 503s for them are never sent)
  server.maxRequestsPerSocket = HTTP_LIMITS.maxRequestsPerSocket;
  // node answers an unmet `Expect:` with 417 itself, counting the request toward the limit without emitting it: the
  // same 417 answered here counts it in our limit too (else ours lagged node's, which then answered 503 to requests
  // past its count on a connection that stayed open)
  server.on("checkExpectation", (request: IncomingMessage, response: ServerResponse) => {
    if (!admit(request, response)) return;
    response.writeHead(417);
    response.end();
  });
  // node ends a connection after its last answer with `socket.destroySoon()`: a lingering close instead
  server.on("connection", (socket: Socket) => {
    socket.destroySoon = () => closeLingering(socket, HTTP_LIMITS.lingerMs);
  });
}

/**
 * Count each connection's requests (HTTP/1.1 ones as node counts them, HTTP/1.0 ones too, which node skips); returns
 * whether `request` may run, and answers one past the limit 503 (buffered, never sent). The maxRequestsPerSocket-th
 * answer says `Connection: close` and the connection closes once it is written (node alone would only say so in the
 * header).
 */
function createRequestLimit(
  maxRequestsPerSocket: number,
): (request: IncomingMessage, response: ServerResponse) => boolean {
  /** Requests each connection made so far. */
  const requestsBySocket = new WeakMap<Socket, number>();
  return (request, response) => {
    const { socket } = request;
    const requests = (requestsBySocket.get(socket) ?? 0) + 1;
    requestsBySocket.set(socket, requests);
    // an HTTP/1.0 request pipelined past the last answer (node limits only HTTP/1.1) is not run: the connection
    // closes once that answer is written, and a client retrying it on a new one cannot apply a change twice. Its 503
    // (node's answer to HTTP/1.1 ones) is never sent, but it is buffered output: past node's high-water mark of it
    // node stops reading the socket, which bounds what a lingering close parses and keeps
    if (requests > maxRequestsPerSocket) {
      response.writeHead(503);
      response.end();
      return false;
    }
    if (requests === maxRequestsPerSocket) response.setHeader("Connection", "close");
    return true;
  };
}

/**
 * End a connection without losing the answers written to it (RFC 9112 §9.6, lingering close). Closing a socket whose
 * input is unread (requests pipelined past the last answer) makes the kernel reset the connection, discarding answers
 * not yet delivered: node's own `destroySoon` closed it as soon as the last answer was written. Here the write side
 * ends after the answers (the client reads them, then end of stream) while node's parser keeps reading the input
 * (nothing more is answered), and the socket closes once the client has closed its side too (it destroys itself once
 * both sides ended), or after `lingerMs`. A client still sending then (past node's read backpressure, which stops
 * reading) is reset, having had `lingerMs` to read its answers. Once node stopped reading, the client's close is not
 * read either: such a connection lingers the whole `lingerMs`, holding a `maxConnections` slot meanwhile.
 */
function closeLingering(socket: Socket, lingerMs: number): void {
  if (socket.destroyed) return;
  const timer = setTimeout(() => socket.destroy(), lingerMs).unref();
  socket.once("close", () => clearTimeout(timer));
  socket.end();
}

/** One shared render of the registry, reused for `cacheMs` and by every scrape that arrives while it runs. */
export function createMetricsCache(
  metrics: Pick<Metrics, "registry">,
  nowMs: () => number,
  cacheMs: number,
): () => Promise<string> {
  let cached: { readonly atMs: number; readonly body: Promise<string> } | undefined;
  return () => {
    const now = nowMs();
    if (cached === undefined || now - cached.atMs >= cacheMs) {
      const body = metrics.registry.metrics();
      cached = { atMs: now, body };
      // a failed render is not cached: the next scrape retries
      body.catch(() => {
        if (cached?.body === body) cached = undefined;
      });
    }
    return cached.body;
  };
}

async function route(
  options: HttpServerOptions,
  metricsAuthorized: (presented: string | null) => boolean,
  renderMetrics: () => Promise<string>,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const url = new URL(request.url ?? "/", "http://localhost");
  const path = url.pathname;
  if (options.api !== undefined && path.startsWith(`${API_PREFIX}/`))
    return options.api(request, response, url);
  if (options.statusPage !== undefined && isStatusPagePath(path))
    return serveStatusPage(options.statusPage, request, response, path);
  const known = path === "/healthz" || path === "/readyz" || path === "/metrics";
  if (!known) return sendJson(response, 404, { error: "not_found", path });
  // HEAD is GET without the body (node's ServerResponse drops it): health probes use HEAD
  if (request.method !== "GET" && request.method !== "HEAD") {
    response.setHeader("Allow", "GET, HEAD");
    return sendJson(response, 405, { error: "method_not_allowed", method: request.method ?? "" });
  }
  if (path === "/metrics" && !metricsAuthorized(presentedToken(request, url))) {
    options.metrics.httpRejected.inc({ reason: "unauthorized" });
    response.setHeader("WWW-Authenticate", 'Bearer realm="pragma-monitor"');
    return sendJson(response, 401, { error: "unauthorized", message: "a valid bearer token is required" });
  }
  switch (path) {
    case "/healthz":
      return sendJson(response, 200, { status: "ok" });
    case "/readyz": {
      const { ready, reasons } = options.readiness();
      return ready
        ? sendJson(response, 200, { status: "ready" })
        : sendJson(response, 503, { status: "not_ready", reasons });
    }
    case "/metrics": {
      const body = await renderMetrics();
      response.writeHead(200, {
        "Content-Type": options.metrics.registry.contentType,
        "Content-Length": Buffer.byteLength(body),
        "Cache-Control": "no-store",
      });
      response.end(body);
    }
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store",
  });
  response.end(text);
}

/**
 * Start listening; resolves with the bound port (useful with port 0), rejects with PM_ERR_LISTEN (the errno
 * error as its cause) on EADDRINUSE and the like. `settings` names what the operator changes to fix it.
 */
export function listen(
  server: Server,
  host: string,
  port: number,
  settings = "server.host, server.port",
): Promise<{ readonly port: number }> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void =>
      reject(
        new PmError(
          "PM_ERR_LISTEN",
          `cannot listen on ${host}:${port} (${settings}): ${listenReason(error)}`,
          {
            cause: error,
          },
        ),
      );
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve({ port: (server.address() as AddressInfo).port });
    });
  });
}

/** Listen errors in an operator's words (the errno code stays in the error's `cause`). */
const LISTEN_REASONS: Readonly<Record<string, string>> = {
  EADDRINUSE: "the port is already in use by another process",
  EACCES: "permission denied (ports below 1024 need privileges)",
  EADDRNOTAVAIL: "no such address on this machine",
};

/** Why listen failed, for the one line the daemon logs before it exits. */
function listenReason(error: Error): string {
  return LISTEN_REASONS[errorCode(error) ?? ""] ?? error.message;
}
