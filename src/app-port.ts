// The daemon's HTTP port: the operator API, the status page and the WebSocket server, under one access policy.
import type { AppConfig } from "./config/types.js";
import { createAccessPolicy } from "./http/access.js";
import { createHttpServer, listen } from "./http/server.js";
import { apiRoutes } from "./http/api/index.js";
import { operatorApiDeps } from "./app-api.js";
import { createApiRouter } from "./http/api/router.js";
import { loadStatusPage, type StatusPage, statusPageDirs } from "./http/status-page.js";
import type { EventHub } from "./pipeline/event-hub.js";
import { createWsServer } from "./sinks/ws/server.js";
import { VERSION } from "./version.js";
import { type Daemon, readiness, requireSilencer } from "./app-daemon.js";

/** The HTTP port with the WebSocket and operator APIs on it, under one Host/Origin policy; returns the port listened on. */
export async function openPort(app: Daemon, hub: EventHub, marketNowMs: () => number): Promise<number> {
  const { config, metrics, deps } = app;
  const access = createAccessPolicy(config.server);
  const httpServer = createHttpServer({
    metrics,
    readiness: () => readiness(app),
    logger: app.log("http"),
    access,
    metricsToken: config.server.metricsToken,
    maxConnections: config.server.maxConnections,
    nowMs: deps.nowMs,
    api: createApiRouter({
      routes: apiRoutes(
        operatorApiDeps({
          hub,
          runner: () => app.runner,
          chatops: () => app.chatops,
          readiness: () => readiness(app),
          config: () => app.config,
          upstreamUrl: () => app.upstreamUrl,
          nowMs: deps.nowMs,
          marketNowMs,
          startedAtMs: () => app.startedAtMs,
          configGeneration: () => app.cluster?.shared.configGeneration() ?? app.configGeneration,
          cluster: () => app.cluster?.shared.status() ?? null,
          silencer: requireSilencer(app),
        }),
      ),
      access,
      token: () => app.config.server.token,
    }),
    statusPage: openStatusPage(app),
  });
  app.httpServer = httpServer;
  app.ws = createWsServer({
    access,
    server: httpServer,
    path: "/ws",
    source: hub,
    config: config.server,
    metrics,
    logger: app.log("ws"),
    knownPairs: () => knownPairs(app.config),
    knownRules: () => app.knownRules,
    version: VERSION,
    nowMs: deps.nowMs,
  });
  const { port } = await listen(httpServer, config.server.host, config.server.port);
  app.listeningPort = port;
  return port;
}

/** The status page's files, read once; a checkout that was never built serves a 503 at `/` and says why once. */
function openStatusPage(app: Daemon): StatusPage {
  const page = loadStatusPage(statusPageDirs());
  if (page.unavailable !== null)
    app.log("http").warn({ reason: page.unavailable }, "status page not built: / answers 503");
  return page;
}

/** Every pair the config monitors (for WebSocket filter validation). */
function knownPairs(config: AppConfig): ReadonlySet<string> {
  const m = config.monitors;
  return new Set([
    ...m.offchain.map((o) => o.pair),
    ...m.onchain.map((o) => o.pair),
    ...m.funding.map((f) => f.pair),
  ]);
}
