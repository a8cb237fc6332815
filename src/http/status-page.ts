// The status page at `/` (issue 20 §3): its files read once at start into an allow-list, served with strict headers.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { packageRoot } from "../config/package-root.js";

/** One file of the page, held in memory with its gzip form (the whole page is a few tens of KiB). */
export interface PageFile {
  readonly body: Buffer;
  readonly gzip: Buffer;
  readonly contentType: string;
  /** Strong validator of `body`: a reload revalidates every file and gets 304s while nothing changed. */
  readonly etag: string;
}

/** The page as served: URL path → file; `unavailable` says why `/` cannot be served (not built), else null. */
export interface StatusPage {
  readonly files: ReadonlyMap<string, PageFile>;
  readonly unavailable: string | null;
}

/** Where the page's files are: the hand-written ones (HTML, CSS, icon) and the compiled scripts. */
export interface StatusPageDirs {
  /** `web/static/`: index.html, style.css, favicon.svg. */
  readonly staticDir: string;
  /** `dist/web/`: the page's modules as compiled by `tsc -b` (web/tsconfig.json). */
  readonly scriptDir: string;
}

/** URL prefix of every file but the page itself; scripts sit under `/assets/js/`. */
export const ASSETS_PREFIX = "/assets/";
const SCRIPTS_PREFIX = `${ASSETS_PREFIX}js/`;

/** The only types served: anything else in the folders is not a file of the page. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".svg": "image/svg+xml",
};

/** A plain file name (no separators, no dot-files): the allow-list is built from names like this only. */
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9]+)+$/;

/** The folders of the installed package (or the source checkout): web/static/ and dist/web/ under its root. */
export function statusPageDirs(root: string = packageRoot()): StatusPageDirs {
  return { staticDir: join(root, "web", "static"), scriptDir: join(root, "dist", "web") };
}

/** Read one file into its served form. */
function pageFile(path: string, contentType: string): PageFile {
  const body = readFileSync(path);
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
  return { body, gzip: gzipSync(body, { level: 9 }), contentType, etag };
}

/** Regular files of `dir` (not its sub-folders) with a served extension, as [name, content type]. */
function servable(dir: string, extensions: readonly string[]): [string, string][] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => FILE_NAME.test(name) && extensions.includes(extname(name)))
    .filter((name) => statSync(join(dir, name)).isFile())
    .sort()
    .map((name) => [name, CONTENT_TYPES[extname(name)] ?? "application/octet-stream"]);
}

/**
 * Load the page once (the daemon serves what was built when it started). Requests are looked up in this map
 * and nothing else is ever read from disk, so no request path can reach another file (no traversal to guard).
 */
export function loadStatusPage(dirs: StatusPageDirs): StatusPage {
  const files = new Map<string, PageFile>();
  for (const [name, type] of servable(dirs.staticDir, [".html", ".css", ".svg"]))
    files.set(
      name === "index.html" ? "/" : `${ASSETS_PREFIX}${name}`,
      pageFile(join(dirs.staticDir, name), type),
    );
  for (const [name, type] of servable(dirs.scriptDir, [".js"]))
    files.set(`${SCRIPTS_PREFIX}${name}`, pageFile(join(dirs.scriptDir, name), type));
  const unavailable = !files.has("/")
    ? `${join(dirs.staticDir, "index.html")} is missing`
    : !files.has(`${SCRIPTS_PREFIX}main.js`)
      ? `${join(dirs.scriptDir, "main.js")} is missing: run \`npm run build\``
      : null;
  return { files, unavailable };
}

/** Total size of the page as sent to a browser that accepts gzip (the size budget's measure). */
export function gzippedBytes(page: StatusPage): number {
  let total = 0;
  for (const file of page.files.values()) total += file.gzip.length;
  return total;
}

/** Whether `path` belongs to the page (the server routes these here, after /api/v1 and the probes). */
export function isStatusPagePath(path: string): boolean {
  return path === "/" || path.startsWith(ASSETS_PREFIX);
}

/** A Host header fit to be repeated in the policy (a name or IP literal and a port), else null. */
function policyHost(host: string | undefined): string | null {
  if (host === undefined) return null;
  return /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/.test(host) ? host : null;
}

/**
 * The Content-Security-Policy of every page answer: scripts and styles from this origin only (no inline code,
 * no eval), fetches and the WebSocket to this host only, no frames, no forms posting elsewhere, no base rewrite.
 * `ws:`/`wss:` of the same host are listed besides 'self' for browsers that read CSP2's narrower 'self'.
 */
export function contentSecurityPolicy(host: string | undefined): string {
  const safeHost = policyHost(host);
  const sockets = safeHost === null ? "" : ` ws://${safeHost} wss://${safeHost}`;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    `connect-src 'self'${sockets}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** Headers every answer of the page carries, errors included. */
function securityHeaders(request: IncomingMessage): Record<string, string> {
  return {
    "Content-Security-Policy": contentSecurityPolicy(request.headers.host),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
  };
}

/** Whether the client takes gzip (an explicit `gzip;q=0` refuses it). */
function acceptsGzip(request: IncomingMessage): boolean {
  const header = String(request.headers["accept-encoding"] ?? "");
  const entry = header
    .split(",")
    .map((part) => part.trim().toLowerCase())
    .find((part) => part === "gzip" || part.startsWith("gzip;"));
  return entry !== undefined && !/;\s*q=0(\.0*)?$/.test(entry);
}

/** A short error answer in the page's headers (JSON like the server's other refusals). */
function refuse(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  body: Readonly<Record<string, string>>,
  extra: Readonly<Record<string, string>> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...securityHeaders(request),
    ...extra,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store",
  });
  response.end(text);
}

/** Answer a GET or HEAD of the page or one of its files (the caller checked the Host already). */
export function serveStatusPage(
  page: StatusPage,
  request: IncomingMessage,
  response: ServerResponse,
  path: string,
): void {
  if (request.method !== "GET" && request.method !== "HEAD")
    return refuse(
      request,
      response,
      405,
      { error: "method_not_allowed", method: request.method ?? "" },
      { Allow: "GET, HEAD" },
    );
  if (page.unavailable !== null && path === "/")
    return refuse(request, response, 503, {
      error: "status_page_unavailable",
      message: `the status page is not built: ${page.unavailable}`,
    });
  const file = page.files.get(path);
  if (file === undefined) return refuse(request, response, 404, { error: "not_found", path });
  const headers = {
    ...securityHeaders(request),
    "Content-Type": file.contentType,
    // revalidate on every load (the names are not content-hashed), cheaply: a 304 while the ETag matches
    "Cache-Control": "no-cache",
    ETag: file.etag,
    Vary: "Accept-Encoding",
  };
  if (request.headers["if-none-match"] === file.etag) {
    response.writeHead(304, headers);
    return void response.end();
  }
  const gzip = acceptsGzip(request);
  const body = gzip ? file.gzip : file.body;
  response.writeHead(200, {
    ...headers,
    ...(gzip ? { "Content-Encoding": "gzip" } : {}),
    "Content-Length": body.length,
  });
  // node sends no body for HEAD, with the same headers as GET
  response.end(body);
}
