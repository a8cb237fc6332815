// The daemon's own base URL as users reach it, and the link to one alert in it (Alertmanager's generatorURL).
import type { ServerConfig } from "../config/types.js";

/** Path of an alert in the operator API (DESIGN §9); the link resolves once that API is served. */
export const ALERT_LINK_PATH = "/api/v1/alerts";

/**
 * `server.externalUrl` without a trailing slash, or `http://<host>:<port>` of the listening socket; a
 * wildcard bind (0.0.0.0, ::) is named by `machineName`, since nobody can browse to 0.0.0.0.
 */
export function externalBaseUrl(
  server: Pick<ServerConfig, "externalUrl" | "host">,
  port: number,
  machineName: string,
): string {
  if (server.externalUrl !== "") return server.externalUrl.replace(/\/+$/, "");
  const wildcard = server.host === "0.0.0.0" || server.host === "::" || server.host === "";
  const host = wildcard ? machineName : server.host;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** Link to the alert with `fingerprint` under `baseUrl`. */
export function alertLink(baseUrl: string, fingerprint: string): string {
  return `${baseUrl}${ALERT_LINK_PATH}?fingerprint=${encodeURIComponent(fingerprint)}`;
}
