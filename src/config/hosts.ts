// Host names and origins as config and the HTTP surface read them: loopback test, Host header name, origin entries.
import { isIP } from "node:net";

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** Whether a bind address or Host name is loopback (localhost, 127.0.0.0/8, ::1). */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase();
  if (LOOPBACK_NAMES.has(name) || name.endsWith(".localhost")) return true;
  return isIP(name) === 4 && name.startsWith("127.");
}

/** The host name of a `Host` header value without its port: "[::1]:8787" → "[::1]", "a.b:80" → "a.b". */
export function hostName(header: string): string {
  const value = header.trim().toLowerCase();
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    return end === -1 ? value : value.slice(0, end + 1);
  }
  const colon = value.indexOf(":");
  return colon === -1 ? value : value.slice(0, colon);
}

/** The origin a config entry names ("https://Dash.example.com/" → "https://dash.example.com"), or null if it is not one. */
export function normaliseOrigin(entry: string): string | null {
  if (entry === "*") return entry;
  try {
    const url = new URL(entry);
    const bare = url.pathname === "/" && url.search === "" && url.hash === "" && url.username === "";
    return bare && (url.protocol === "http:" || url.protocol === "https:") ? url.origin : null;
  } catch {
    return null;
  }
}
