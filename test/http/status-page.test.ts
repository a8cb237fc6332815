// The status page as the daemon serves it: content types, the security headers, gzip and revalidation, HEAD, 404s,
// no way out of the allow-list (traversal), GET/HEAD only; over a real socket on 127.0.0.1:0.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccessPolicy } from "../../src/http/access.js";
import { createHttpServer, listen } from "../../src/http/server.js";
import { contentSecurityPolicy, loadStatusPage, type StatusPage } from "../../src/http/status-page.js";
import { createMetrics } from "../../src/metrics.js";

const SECRET = "not-for-browsers-7f3a";
const HTML = '<!doctype html><title>t</title><script type="module" src="/assets/js/main.js"></script>';

/** A page laid out like web/static + dist/web, with files beside and below it that must never be served. */
function fixture(root: string): { staticDir: string; scriptDir: string } {
  const staticDir = join(root, "web", "static");
  const scriptDir = join(root, "dist", "web");
  mkdirSync(join(staticDir, "nested"), { recursive: true });
  mkdirSync(scriptDir, { recursive: true });
  writeFileSync(join(staticDir, "index.html"), HTML);
  writeFileSync(join(staticDir, "style.css"), "body{color:red}");
  writeFileSync(join(staticDir, "favicon.svg"), "<svg xmlns='http://www.w3.org/2000/svg'/>");
  writeFileSync(join(staticDir, "notes.txt"), SECRET);
  writeFileSync(join(staticDir, ".env"), SECRET);
  writeFileSync(join(staticDir, "nested", "deep.css"), SECRET);
  writeFileSync(join(scriptDir, "main.js"), 'import "./dep.js";\n'.repeat(40));
  writeFileSync(join(scriptDir, "dep.js"), "export {};\n");
  writeFileSync(join(scriptDir, "main.d.ts"), SECRET);
  writeFileSync(join(root, "package.json"), SECRET);
  return { staticDir, scriptDir };
}

/** One request with exactly this path and these headers (fetch would normalise `..` away before sending). */
function raw(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, method: options.method ?? "GET", headers: options.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function serve(page: StatusPage): Promise<{ server: Server; port: number }> {
  const server = createHttpServer({
    metrics: createMetrics(new Registry()),
    readiness: () => ({ ready: true, reasons: [] }),
    logger: pino({ level: "silent" }),
    access: createAccessPolicy({ host: "127.0.0.1", allowedHosts: [], allowedOrigins: [] }),
    maxConnections: 100,
    nowMs: () => 0,
    statusPage: page,
  });
  const { port } = await listen(server, "127.0.0.1", 0);
  return { server, port };
}

describe("the status page's files", () => {
  const root = mkdtempSync(join(tmpdir(), "pm-page-"));
  let server: Server;
  let port: number;
  beforeAll(async () => {
    ({ server, port } = await serve(loadStatusPage(fixture(root))));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(root, { recursive: true, force: true });
  });

  it.each([
    ["/", "text/html; charset=utf-8"],
    ["/assets/style.css", "text/css; charset=utf-8"],
    ["/assets/favicon.svg", "image/svg+xml"],
    ["/assets/js/main.js", "text/javascript; charset=utf-8"],
    ["/assets/js/dep.js", "text/javascript; charset=utf-8"],
  ])("serves %s as %s with the page's security headers", async (path, type) => {
    const response = await raw(port, path);
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toBe(type);
    expect(response.headers["x-content-type-options"]).toBe("nosniff");
    expect(response.headers["cache-control"]).toBe("no-cache");
    expect(response.headers["etag"]).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(response.headers["x-frame-options"]).toBe("DENY");
    expect(response.headers["referrer-policy"]).toBe("no-referrer");
    expect(response.headers["content-security-policy"]).toBe(contentSecurityPolicy(`127.0.0.1:${port}`));
  });

  it("has a strict policy: own scripts and styles only, nothing inline, connections to this host only", () => {
    const policy = contentSecurityPolicy("127.0.0.1:8787");
    expect(policy.split("; ")).toEqual([
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self'",
      "connect-src 'self' ws://127.0.0.1:8787 wss://127.0.0.1:8787",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ]);
    expect(policy).not.toMatch(/unsafe|\*/);
    // a Host that could smuggle a directive is left out rather than repeated
    expect(contentSecurityPolicy("x; script-src *")).toContain("connect-src 'self';");
    expect(contentSecurityPolicy("[::1]:8787")).toContain("ws://[::1]:8787");
  });

  it("sends gzip to a browser that takes it, the same bytes once inflated", async () => {
    const plain = await raw(port, "/assets/js/main.js");
    const zipped = await raw(port, "/assets/js/main.js", {
      headers: { "Accept-Encoding": "gzip, deflate, br" },
    });
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    expect(zipped.headers["vary"]).toBe("Accept-Encoding");
    expect(Number(zipped.headers["content-length"])).toBe(zipped.body.length);
    expect(zipped.body.length).toBeLessThan(plain.body.length);
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    const refused = await raw(port, "/assets/js/main.js", {
      headers: { "Accept-Encoding": "gzip;q=0, identity" },
    });
    expect(refused.headers["content-encoding"]).toBeUndefined();
  });

  it("answers a revalidation with 304 while the file is the same", async () => {
    const first = await raw(port, "/");
    const again = await raw(port, "/", { headers: { "If-None-Match": String(first.headers["etag"]) } });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect((await raw(port, "/", { headers: { "If-None-Match": '"other"' } })).status).toBe(200);
  });

  it("answers HEAD like GET without the body", async () => {
    const head = await raw(port, "/", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(Number(head.headers["content-length"])).toBe(Buffer.byteLength(HTML));
    expect(head.headers["content-security-policy"]).toContain("script-src 'self'");
  });

  it.each(["POST", "PUT", "DELETE", "OPTIONS"])(
    "refuses %s with 405 and Allow: GET, HEAD",
    async (method) => {
      const response = await raw(port, "/", { method });
      expect(response.status).toBe(405);
      expect(response.headers["allow"]).toBe("GET, HEAD");
    },
  );

  it.each([
    "/assets/nope.js",
    "/assets/notes.txt",
    "/assets/.env",
    "/assets/nested/deep.css",
    "/assets/js/main.d.ts",
    "/assets/index.html",
    "/assets/js/",
    "/assets/",
    "/index.html",
    "/assets/../package.json",
    "/assets/../../package.json",
    "/assets/js/../../../package.json",
    "/assets/%2e%2e/%2e%2e/package.json",
    "/assets/..%2f..%2fpackage.json",
    "/assets/js/..%5c..%5c..%5cpackage.json",
    "/assets/nested%2fdeep.css",
    "/assets/style.css%00.js",
  ])("serves nothing outside the allow-list: %s", async (path) => {
    const response = await raw(port, path);
    expect(response.status).toBe(404);
    expect(response.body.toString()).not.toContain(SECRET);
  });

  it("still applies the Host rule (DNS rebinding)", async () => {
    const response = await raw(port, "/", { headers: { Host: "rebind.evil.example" } });
    expect(response.status).toBe(403);
  });
});

describe("a checkout that was never built", () => {
  it("answers / with 503 saying how to build it, and still 404s unknown assets", async () => {
    const root = mkdtempSync(join(tmpdir(), "pm-page-"));
    const dirs = fixture(root);
    rmSync(dirs.scriptDir, { recursive: true });
    const page = loadStatusPage(dirs);
    expect(page.unavailable).toMatch(/main\.js is missing: run `npm run build`/);
    const { server, port } = await serve(page);
    try {
      const response = await raw(port, "/");
      expect(response.status).toBe(503);
      expect(JSON.parse(response.body.toString())).toMatchObject({ error: "status_page_unavailable" });
      expect((await raw(port, "/assets/js/main.js")).status).toBe(404);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
    }
  });
});
