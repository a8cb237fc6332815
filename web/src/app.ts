// The page's controller: the WebSocket session through the resume bookkeeping into the state, the reads and writes
// it asks for, and the render they lead to. Everything it decides is in the pure modules; this file only wires.
import { callApi, type ApiResult } from "./api.js";
import { openConnection, type Connection } from "./connection.js";
import { decodeSilences, decodeStatus, decodeTargets } from "./decode.js";
import { closeSession, FRESH_SESSION, reloadSession, stepFrame, type Session } from "./session.js";
import { applyConnection, applyRead, type Read, type Resource } from "./store.js";
import { webSocketUrl } from "./token.js";
import type { NewSilence, ServerFrame } from "./types.js";

/** Where each resource is read. */
const READ_PATHS: Readonly<Record<Resource, string>> = {
  targets: "/targets",
  status: "/status",
  silences: "/silences",
};

/** What the controller holds. */
export interface AppContext {
  session: Session;
  token: string | null;
  conn: Connection | null;
  /** Reads in flight, and whether another was asked for meanwhile. */
  readonly reading: Map<Resource, "busy" | "again">;
  /** Silences being expired (their buttons are disabled meanwhile). */
  readonly expiring: Set<string>;
  /** Redraw soon (coalesced). */
  readonly render: () => void;
  /** Ask for the token (the daemon refused the one we have, or we have none). */
  readonly askToken: (message: string) => void;
}

/** A new controller context; `render` and `askToken` come from the view. */
export function createContext(
  token: string | null,
  render: () => void,
  askToken: (message: string) => void,
): AppContext {
  return {
    session: FRESH_SESSION,
    token,
    conn: null,
    reading: new Map(),
    expiring: new Set(),
    render,
    askToken,
  };
}

/** The daemon's clock as the page estimates it (browser clock less the offset learnt from ticks). */
export function daemonNowMs(ctx: AppContext): number {
  return Date.now() - ctx.session.page.clockOffsetMs;
}

/** Open the WebSocket session (again, after a token was entered). */
export function connect(ctx: AppContext): void {
  ctx.conn?.stop();
  ctx.session = { ...ctx.session, page: applyConnection(ctx.session.page, "connecting") };
  ctx.conn = openConnection({
    url: () => webSocketUrl(window.location, ctx.token),
    onOpen: () => undefined,
    onFrame: (frame) => {
      onFrame(ctx, frame);
      ctx.render();
    },
    onClose: (info) => onSocketClosed(ctx, info.opened),
  });
  ctx.render();
}

/** One frame: the pure step decides, this runs what it asks for. */
function onFrame(ctx: AppContext, frame: ServerFrame): void {
  const step = stepFrame(ctx.session, frame, Date.now());
  ctx.session = step.session;
  if (step.reload) {
    ctx.session = reloadSession(ctx.session);
    ctx.conn?.restart();
    return;
  }
  for (const message of step.messages) ctx.conn?.send(message);
  for (const resource of step.reads) void read(ctx, resource);
}

/** The socket closed: say so, and when it never opened, find out whether the token is the reason. */
function onSocketClosed(ctx: AppContext, opened: boolean): void {
  ctx.session = closeSession(ctx.session, opened);
  ctx.render();
  if (opened) return;
  // a refused upgrade is invisible to a page (no status): ask the API, which says 401 for the same token
  void callApi("HEAD", "/openapi.json", ctx.token).then((result) => {
    if (result.status === 401) unauthorized(ctx, ctx.token === null ? "" : "The daemon refused this token.");
  });
}

/** The daemon wants a (different) token: stop trying and ask for one. */
function unauthorized(ctx: AppContext, message: string): void {
  ctx.conn?.stop();
  ctx.conn = null;
  ctx.session = { ...ctx.session, page: applyConnection(ctx.session.page, "unauthorized") };
  ctx.askToken(message);
  ctx.render();
}

/** Reads of one resource start at least this far apart: a burst of alert events costs one more read, not one each. */
const READ_GAP_MS = 2_000;

/** Read a resource; reads asked for while one is in flight make one more, READ_GAP_MS after it started. */
async function read(ctx: AppContext, resource: Resource): Promise<void> {
  if (ctx.reading.has(resource)) return void ctx.reading.set(resource, "again");
  for (;;) {
    ctx.reading.set(resource, "busy");
    const startedMs = Date.now();
    const result = await callApi("GET", READ_PATHS[resource], ctx.token);
    applyReadResult(ctx, resource, result);
    if (ctx.reading.get(resource) !== "again") break;
    await new Promise((resolve) => window.setTimeout(resolve, startedMs + READ_GAP_MS - Date.now()));
  }
  ctx.reading.delete(resource);
}

function applyReadResult(ctx: AppContext, resource: Resource, result: ApiResult): void {
  if (result.status === 401) return unauthorized(ctx, "The daemon refused this token.");
  const page = applyRead(ctx.session.page, readOf(resource, result), daemonNowMs(ctx));
  ctx.session = { ...ctx.session, page };
  ctx.render();
}

/** An API answer as the store takes it: the decoded value, or why there is none. */
function readOf(resource: Resource, result: ApiResult): Read {
  if (!result.ok) return { resource, error: result.message };
  const unexpected = { resource, error: "unexpected answer" };
  switch (resource) {
    case "targets": {
      const value = decodeTargets(result.body);
      return value === null ? unexpected : { resource, value };
    }
    case "status": {
      const value = decodeStatus(result.body);
      return value === null ? unexpected : { resource, value };
    }
    case "silences": {
      const value = decodeSilences(result.body);
      return value === null ? unexpected : { resource, value };
    }
  }
}

/** Create a silence; null when the daemon took it, else what to tell the operator. */
export async function createSilence(ctx: AppContext, silence: NewSilence): Promise<string | null> {
  const result = await callApi("POST", "/silences", ctx.token, silence);
  if (result.ok) return null;
  return result.status === 401 ? "The daemon refused the token." : `Not created: ${result.message}`;
}

/** Expire a silence; null when done, else what went wrong. The list follows from the lifecycle event. */
export async function expireSilence(ctx: AppContext, id: string): Promise<string | null> {
  ctx.expiring.add(id);
  ctx.render();
  const result = await callApi("DELETE", `/silences/${encodeURIComponent(id)}`, ctx.token);
  ctx.expiring.delete(id);
  ctx.render();
  return result.ok ? null : `Silence ${id} was not expired: ${result.message}`;
}
