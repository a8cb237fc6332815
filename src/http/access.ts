// Host and Origin rules for every request on the daemon's port: DNS rebinding and cross-site WebSocket hijacking.
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import { hostName, isLoopbackHost, normaliseOrigin } from "../config/hosts.js";

/** The server settings the rules read. */
export interface AccessConfig {
  /** Address the server binds: a loopback bind turns the Host check on. */
  readonly host: string;
  /** Extra Host names (any port) accepted besides the loopback ones; ".example.com" also matches subdomains, "*" any. */
  readonly allowedHosts: readonly string[];
  /** Browser origins accepted besides the daemon's own ("https://dash.example.com"); "*" any. */
  readonly allowedOrigins: readonly string[];
}

/** Why a request is refused, or null when it may proceed. */
export type AccessRefusal = "host" | "origin" | null;

/** The rules of one server configuration. */
export interface AccessPolicy {
  /** Whether the `Host` header names this daemon (always true when the check is off). */
  hostAllowed(request: IncomingMessage): boolean;
  /** Whether the browser `Origin` (absent for non-browser clients) is the daemon's own or listed. */
  originAllowed(request: IncomingMessage): boolean;
  /** Host, then Origin: the verdict for a WebSocket upgrade or a state-changing request. */
  check(request: IncomingMessage): AccessRefusal;
}

/** Build the rules for `config`; entries are normalised once here. */
export function createAccessPolicy(config: AccessConfig): AccessPolicy {
  const hosts = config.allowedHosts.map((entry) => entry.trim().toLowerCase());
  const anyHost = hosts.includes("*");
  // bound to a public address, the Host is checked only when the operator lists names
  const checkHost = isLoopbackHost(config.host) || hosts.length > 0;
  const origins = new Set(config.allowedOrigins.flatMap((entry) => normaliseOrigin(entry) ?? []));
  const anyOrigin = origins.has("*");

  const nameAllowed = (name: string): boolean =>
    isLoopbackHost(name) ||
    hosts.some((entry) => entry === name || (entry.startsWith(".") && `.${name}`.endsWith(entry)));
  // A Host vouches for "the daemon's own origin" only when no rebinding name can be behind it: loopback,
  // an IP literal, or a listed name. On a public bind with no allowedHosts the Host is not checked, and
  // a page on http://evil.example:8787 rebound to this address would otherwise be its own origin.
  const vouchesForOrigin = (name: string): boolean =>
    anyHost || nameAllowed(name) || isIP(name.replace(/^\[|\]$/g, "")) !== 0;

  const hostAllowed = (request: IncomingMessage): boolean => {
    if (!checkHost || anyHost) return true;
    // HTTP/1.1 requires Host (node answers 400 without it); only HTTP/1.0 tools omit it, and no browser does
    const header = request.headers.host;
    return header === undefined || nameAllowed(hostName(header));
  };

  const originAllowed = (request: IncomingMessage): boolean => {
    const origin = request.headers.origin;
    if (origin === undefined || anyOrigin) return true;
    const normalised = normaliseOrigin(origin);
    // "null" (sandboxed frames, file://) and anything unparsable are never the daemon's own
    if (normalised === null) return false;
    if (origins.has(normalised)) return true;
    const host = request.headers.host;
    if (host === undefined || !hostAllowed(request) || !vouchesForOrigin(hostName(host))) return false;
    // the daemon's own origin: the page was served from this Host (https when behind a TLS proxy)
    const own = normaliseOrigin(`http://${host}`);
    return own !== null && (normalised === own || normalised === own.replace(/^http:/, "https:"));
  };

  return {
    hostAllowed,
    originAllowed,
    check: (request) => (!hostAllowed(request) ? "host" : !originAllowed(request) ? "origin" : null),
  };
}
