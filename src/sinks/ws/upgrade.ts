// Who may open a WebSocket: not while shutting down, allowed Host and Origin, the bearer token, the client limit.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import type { ServerConfig } from "../../config/types.js";
import type { AccessPolicy } from "../../http/access.js";
import { createBurstLog } from "../../log-burst.js";
import type { Metrics } from "../../metrics.js";
import { createTokenCheck, presentedToken } from "./auth.js";

/** The admission checks of the upgrade request, in order; a refusal is answered, counted and logged. */
export interface UpgradeGate {
  /** True when the request may be upgraded; false after refusing it (the socket is answered and closed). */
  admit(
    request: IncomingMessage,
    socket: Duplex,
    url: URL,
    server: { readonly closing: boolean; readonly clients: number },
  ): boolean;
  /** Flush the refusal logs (shutdown). */
  close(): void;
}

/** Build the gate of the WebSocket endpoint from the server config and the daemon's Host/Origin policy. */
export function createUpgradeGate(options: {
  readonly config: ServerConfig;
  readonly access: AccessPolicy;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Clock of the refusal bursts (ms). */
  readonly nowMs: () => number;
}): UpgradeGate {
  const { config, access, metrics, logger, nowMs } = options;
  const checkToken = createTokenCheck(config.token);
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
  return {
    admit(request, socket, url, server) {
      if (server.closing) {
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
      if (server.clients >= config.maxClients) {
        metrics.wsRejected.inc({ reason: "max_clients" });
        logger.warn({ maxClients: config.maxClients }, "refusing WebSocket client: too many clients");
        return refuse(socket, 503, "max_clients", "too many clients");
      }
      return true;
    },
    close() {
      refusedAccess.close();
      refusedAuth.close();
    },
  };
}

/** Answer a refused upgrade with a small JSON HTTP response and close the socket; returns false (not admitted). */
export function refuse(socket: Duplex, status: number, code: string, message: string): false {
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
  return false;
}
