// The simulator's HTTP server (node:http): auth, transport faults, per-tick response cache, control endpoint.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createAccessPolicy } from "../http/access.js";
import { SIMULATOR_VAULT_BASE_PATH } from "../upstream/wire.js";
import { listen } from "../http/server.js";
import type { PairDef, PublisherDef, VaultDef } from "./catalog.js";
import { createSystemClock, type SimClock } from "./clock.js";
import { createControl, handleControl, type SimulatorControl } from "./control.js";
import { FaultBook, type TransportEffects } from "./faults.js";
import { rfc3339Nanos } from "./format.js";
import { createMarket, floorToTick, type Market } from "./market.js";
import { entryError, JSON_TYPE, TEXT_TYPE, type SimResponse } from "./responses.js";
import { dispatch, matchPath, NOT_FOUND, type Matched } from "./routes.js";
import type { Scenario } from "./scenario.js";
import { parseStreamRequest } from "./stream-routes.js";
import { createStreamSessions, type StreamSessions } from "./stream-sessions.js";

/** Options of startSimulator; everything has a default. */
export interface SimulatorOptions {
  readonly host?: string;
  readonly port?: number;
  readonly seed?: number;
  readonly scenario?: Scenario;
  readonly clock?: SimClock;
  /** When non-empty, pair price and candlestick require one of these in `x-api-key`. */
  readonly apiKeys?: readonly string[];
  readonly pairs?: readonly PairDef[];
  readonly publishers?: readonly PublisherDef[];
  readonly vaults?: readonly VaultDef[];
  /** Gap between the price stream's keep-alive comments (default 30 s, as the live server). */
  readonly streamKeepAliveMs?: number;
}

/** A listening simulator. */
export interface RunningSimulator {
  /** Base URL of the /node/v1 endpoints, e.g. http://127.0.0.1:PORT. */
  readonly url: string;
  /** Base URL of the vault API: url + "/vault". */
  readonly vaultUrl: string;
  readonly port: number;
  readonly control: SimulatorControl;
  readonly market: Market;
  close(): Promise<void>;
}

interface Rendered {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | number>>;
  readonly payload: Buffer;
}

const CACHE_LIMIT = 4_096;
const MAX_HEADER_BYTES = 65_536;
/** Endpoints that require `x-api-key` when keys are configured. */
const KEYED_ENDPOINTS: ReadonlySet<string> = new Set(["pair_price", "candlestick", "multi_stream"]);
const CONTROL_BODY_LIMIT_BYTES = 65_536;

function render(response: SimResponse): Rendered {
  const payload = Buffer.from(response.body, "utf8");
  return {
    status: response.status,
    headers: { "content-type": response.contentType, "content-length": payload.length, ...response.headers },
    payload,
  };
}

function json(status: number, body: unknown): SimResponse {
  return { status, contentType: JSON_TYPE, body: JSON.stringify(body) };
}

function outageResponse(outage: NonNullable<TransportEffects["outage"]>, nowMs: number): SimResponse {
  const retry = { "retry-after": String(outage.retryAfterS) };
  if (outage.status === 429) return { status: 429, contentType: TEXT_TYPE, body: "", headers: retry };
  if (outage.status === 503)
    return { status: 503, contentType: TEXT_TYPE, body: "Service Unavailable", headers: retry };
  return entryError(500, "Database error: simulated outage", nowMs);
}

/** Start the simulator on host:port (default 127.0.0.1:0) and resolve once it listens. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const clock = options.clock ?? createSystemClock(1);
  const scenario = options.scenario;
  const seed = scenario?.seed ?? options.seed ?? 1;
  const book = new FaultBook(floorToTick(clock.nowMs()), scenario?.faults ?? []);
  const market = createMarket(seed, clock, {
    faults: book,
    ...(options.pairs === undefined ? {} : { pairs: options.pairs }),
    ...(options.publishers === undefined ? {} : { publishers: options.publishers }),
    ...(options.vaults === undefined ? {} : { vaults: options.vaults }),
    ...(scenario?.historyMs == null ? {} : { historyMs: scenario.historyMs }),
  });
  const control = createControl(market, book, scenario?.name ?? "none");
  const apiKeys = new Set(options.apiKeys ?? []);
  const refuseControl = createControlGuard(options.host ?? "127.0.0.1", apiKeys);
  const respond = createResponder(market, book, clock, { vaultEnvelope: scenario?.vaultEnvelope ?? false });
  const streams = createStreamSessions(market, book, options.streamKeepAliveMs);

  // a stream of many pairs has a long query string: allow 64 KiB of request head (Node's default is 16 KiB)
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    const url = req.url ?? "/";
    const queryAt = url.indexOf("?");
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    const search = queryAt === -1 ? "" : url.slice(queryAt + 1);
    if (path.startsWith("/_sim/")) return serveControl(control, refuseControl, req, res, path);
    const matched = matchPath(path);
    if (matched === null || req.method !== "GET") {
      return send(
        res,
        render(
          matched === null ? NOT_FOUND : { status: 405, contentType: TEXT_TYPE, body: "Method Not Allowed" },
        ),
      );
    }
    if (apiKeys.size > 0 && KEYED_ENDPOINTS.has(matched.endpoint)) {
      const key = req.headers["x-api-key"];
      if (typeof key !== "string" || !apiKeys.has(key)) return send(res, render(unauthorized(clock.nowMs())));
    }
    const transport = book.transport(matched.endpoint, matched.pairId, clock.nowMs());
    if (matched.endpoint === "multi_stream") return serveStream(market, streams, res, search, transport);
    if (transport.latencyMs > 0) {
      setTimeout(
        () => write(res, respond(url, path, search, matched, transport), transport),
        transport.latencyMs,
      );
      return;
    }
    write(res, respond(url, path, search, matched, transport), transport);
  });
  server.keepAliveTimeout = 10_000;

  await listen(server, options.host ?? "127.0.0.1", options.port ?? 0, "--host, --port");
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  const url = `http://${host}:${port}`;
  return {
    url,
    vaultUrl: `${url}${SIMULATOR_VAULT_BASE_PATH}`,
    port,
    control,
    market,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The price stream: an outage or a refused query as an HTTP answer, else an SSE session (after any latency). */
function serveStream(
  market: Market,
  streams: StreamSessions,
  res: ServerResponse,
  search: string,
  transport: TransportEffects,
): void {
  const nowMs = market.clock.nowMs();
  if (transport.outage !== null) return send(res, render(outageResponse(transport.outage, nowMs)));
  const plan = parseStreamRequest(market, search);
  if ("status" in plan) return send(res, render(plan));
  if (transport.latencyMs > 0) setTimeout(() => streams.open(res, plan), transport.latencyMs);
  else streams.open(res, plan);
}

/** The spec's 401 body for a missing or unknown `x-api-key`. */
function unauthorized(nowMs: number): SimResponse {
  const body = {
    code: "UNAUTHORIZED",
    message: "Unauthorized request: Invalid API key",
    timestamp: rfc3339Nanos(nowMs),
  };
  return { status: 401, contentType: JSON_TYPE, body: JSON.stringify(body) };
}

/**
 * Who may use the control endpoint (it changes what the daemon sees): only this machine's own tools, with a key
 * when keys are set, and JSON only. Returns the refusal, or null.
 */
function createControlGuard(
  host: string,
  apiKeys: ReadonlySet<string>,
): (req: IncomingMessage) => SimResponse | null {
  const access = createAccessPolicy({ host, allowedHosts: [], allowedOrigins: [] });
  return (req) => {
    const refusal = access.check(req);
    if (refusal !== null)
      return json(403, { error: refusal === "host" ? "Host not allowed" : "cross-origin request refused" });
    const key = req.headers["x-api-key"];
    if (apiKeys.size > 0 && (typeof key !== "string" || !apiKeys.has(key)))
      return json(401, { error: "the control endpoint requires x-api-key when simulator API keys are set" });
    // a cross-site form or no-cors fetch can only send text/plain and form types: JSON needs a preflight
    const mediaType = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
    if (req.method === "POST" && mediaType !== "application/json")
      return json(415, { error: "Content-Type must be application/json" });
    return null;
  };
}

/** The rendered answer to a data request: an outage, or the route's response, cached per market tick and fault set. */
function createResponder(
  market: Market,
  book: FaultBook,
  clock: SimClock,
  routeOptions: { readonly vaultEnvelope: boolean },
): (url: string, path: string, search: string, matched: Matched, transport: TransportEffects) => Rendered {
  const cache = new Map<string, Rendered>();
  return (url, path, search, matched, transport) => {
    if (transport.outage !== null) return render(outageResponse(transport.outage, clock.nowMs()));
    const key = `${market.nowMs()}|${book.version}|${url}`;
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    let response: SimResponse;
    try {
      response = dispatch(market, matched, search, routeOptions);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      response = entryError(500, `Internal server error: ${reason} (${path})`, clock.nowMs());
    }
    const rendered = render(response);
    if (response.cacheable === true) {
      if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value ?? "");
      cache.set(key, rendered);
    }
    return rendered;
  };
}

/** Write a data response with the transport faults in force: a malformed body, or one cut short. */
function write(res: ServerResponse, rendered: Rendered, transport: TransportEffects): void {
  if (transport.malformed && rendered.status === 200) {
    const half = rendered.payload.subarray(0, Math.ceil(rendered.payload.length / 2));
    const broken = Buffer.concat([half, Buffer.from(",,}{")]);
    res.writeHead(200, { ...rendered.headers, "content-length": broken.length });
    res.end(broken);
    return;
  }
  if (transport.truncated) {
    // Announce the full length, send half, then drop the connection: the client sees a body cut short.
    res.writeHead(rendered.status, rendered.headers);
    res.write(rendered.payload.subarray(0, Math.floor(rendered.payload.length / 2)), () => res.destroy());
    return;
  }
  send(res, rendered);
}

/** Write a rendered response as is. */
function send(
  res: ServerResponse,
  rendered: Rendered,
  extraHeaders?: Readonly<Record<string, string>>,
): void {
  res.writeHead(
    rendered.status,
    extraHeaders === undefined ? rendered.headers : { ...rendered.headers, ...extraHeaders },
  );
  res.end(rendered.payload);
}

/** The control endpoint: refused (and the connection closed), or the body read up to its limit and handled. */
function serveControl(
  control: SimulatorControl,
  refuseControl: (req: IncomingMessage) => SimResponse | null,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): void {
  const refused = refuseControl(req);
  if (refused !== null) return send(res, render(refused), { connection: "close" });
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= CONTROL_BODY_LIMIT_BYTES) chunks.push(chunk);
  });
  req.on("end", () => {
    const response =
      size > CONTROL_BODY_LIMIT_BYTES
        ? json(413, { error: "body too large" })
        : handleControl(control, req.method ?? "GET", path, Buffer.concat(chunks).toString("utf8"));
    send(res, render(response));
  });
}
