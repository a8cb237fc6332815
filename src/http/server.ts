// The daemon's HTTP endpoints: /healthz (alive), /readyz (ready to serve), /metrics (Prometheus text); GET and HEAD.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { Readiness } from "../domain/readiness.js";
import type { Metrics } from "../metrics.js";
import { PmError } from "../errors.js";
import { redactUrl } from "../config/redact.js";
import { createBurstLog } from "../log-burst.js";
import { createTokenCheck, presentedToken } from "../sinks/ws/auth.js";
import type { AccessPolicy } from "./access.js";

export interface HttpServerOptions {
  readonly metrics: Metrics;
  readonly readiness: () => Readiness;
  readonly logger: Logger;
  /** Host rule applied to every request (the WebSocket upgrade applies the same policy). */
  readonly access: AccessPolicy;
  /** Bearer token required on /metrics ("" or absent = open). */
  readonly metricsToken?: string;
}

/** Create the HTTP server (not listening yet); the WebSocket API attaches to its `upgrade` event. */
export function createHttpServer(options: HttpServerOptions): Server {
  const { logger } = options;
  const metricsAuthorized = createTokenCheck(options.metricsToken ?? "");
  const refusedHosts = createBurstLog({
    logger,
    message: "refused HTTP request: Host not allowed",
    windowMs: 10_000,
  });
  const server = createServer((request, response) => {
    if (!options.access.hostAllowed(request)) {
      options.metrics.httpRejected.inc({ reason: "host" });
      refusedHosts.note({ host: request.headers.host, remote: request.socket.remoteAddress });
      return sendJson(response, 403, { error: "forbidden_host", message: "Host header not allowed" });
    }
    route(options, metricsAuthorized, request, response).catch((error: unknown) => {
      logger.error({ err: error, url: redactUrl(request.url ?? "/") }, "HTTP handler failed");
      if (!response.headersSent) sendJson(response, 500, { error: "internal_error" });
      else response.destroy();
    });
  });
  // short keep-alive so shutdown is not held up by idle scrapers
  server.keepAliveTimeout = 5_000;
  server.once("close", () => refusedHosts.close());
  return server;
}

async function route(
  options: HttpServerOptions,
  metricsAuthorized: (presented: string | null) => boolean,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const url = new URL(request.url ?? "/", "http://localhost");
  const path = url.pathname;
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
      const { registry } = options.metrics;
      const body = await registry.metrics();
      response.writeHead(200, {
        "Content-Type": registry.contentType,
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
    const onError = (error: NodeJS.ErrnoException): void =>
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
function listenReason(error: NodeJS.ErrnoException): string {
  return LISTEN_REASONS[error.code ?? ""] ?? error.message;
}
