// The daemon's silences API as the CLI calls it (create, list, expire) over undici, every failure a value with its exit code.
import { Agent } from "undici";
import { z } from "zod";
import { EX_DATAERR, EX_NOPERM, EX_UNAVAILABLE, EX_USAGE } from "./args.js";
import type { Connection, NewSilence } from "./silence-args.js";
import { errorCode } from "../domain/errors.js";
import { HttpClientError, sendHttp, type HttpClient } from "../http-client.js";

/** Path of the silences API under the daemon's URL. */
export const SILENCES_PATH = "/api/v1/silences";
/** A local daemon answers at once; this only bounds a hung one. */
const REQUEST_TIMEOUT_MS = 10_000;
/** 1 000 live silences plus 120 h of expired ones fit many times over. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** A silence as the API lists it (Alertmanager's gettableSilence); other keys pass through untouched. */
const GETTABLE_SILENCE = z.looseObject({
  id: z.string(),
  matchers: z.array(
    z.object({ name: z.string(), value: z.string(), isRegex: z.boolean(), isEqual: z.boolean() }),
  ),
  startsAt: z.string(),
  endsAt: z.string(),
  createdBy: z.string(),
  comment: z.string(),
  status: z.object({ state: z.enum(["active", "pending", "expired"]) }),
});
export type GettableSilence = z.output<typeof GETTABLE_SILENCE>;

/** Why a call did not succeed: a message for stderr and the exit code that goes with it. */
export interface ApiFailure {
  readonly message: string;
  readonly exitCode: number;
}

/** A call's outcome. */
export type ApiResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failure: ApiFailure };

/** The three calls, on one connection pool that `close` ends. */
export interface SilenceApi {
  /** POST: the new silence's id. */
  create(silence: NewSilence): Promise<ApiResult<string>>;
  /** GET: every silence (stored ones and maintenance windows), in the API's order. */
  list(): Promise<ApiResult<readonly GettableSilence[]>>;
  /** DELETE: expire one now. */
  expire(id: string): Promise<ApiResult<null>>;
  close(): Promise<void>;
}

/** A client of the daemon at `connection`; `signal` (Ctrl-C) aborts a call in flight. */
export function createSilenceApi(connection: Connection, signal?: AbortSignal): SilenceApi {
  const agent = new Agent({ connections: 1, keepAliveTimeout: 1_000 });
  const client: HttpClient = {
    dispatcher: agent,
    maxBodyBytes: MAX_BODY_BYTES,
    maxErrorBodyBytes: 64 * 1024,
  };
  const call = async (
    method: "GET" | "POST" | "DELETE",
    path: string,
    body?: unknown,
  ): Promise<ApiResult<unknown>> => {
    const headers: Record<string, string> = { accept: "application/json" };
    if (connection.token !== "") headers["authorization"] = `Bearer ${connection.token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const request = { url: `${connection.url}${path}`, method, headers };
    try {
      const response = await sendHttp(
        client,
        body === undefined ? request : { ...request, body: JSON.stringify(body) },
        REQUEST_TIMEOUT_MS,
        signal,
      );
      return answerOf(connection.url, response.status, response.text);
    } catch (error) {
      return { ok: false, failure: unreachable(connection.url, error) };
    }
  };
  return {
    async create(silence) {
      const result = await call("POST", SILENCES_PATH, silence);
      return decoded(connection.url, result, z.object({ silenceID: z.string().min(1) }), (v) => v.silenceID);
    },
    async list() {
      const result = await call("GET", SILENCES_PATH);
      return decoded(connection.url, result, z.array(GETTABLE_SILENCE), (silences) => silences);
    },
    async expire(id) {
      const result = await call("DELETE", `${SILENCES_PATH}/${encodeURIComponent(id)}`);
      return result.ok ? { ok: true, value: null } : result;
    },
    close: () => agent.close(),
  };
}

/** A 2xx body as parsed JSON, or the failure an error status means (its `{error, message}` body read when it has one). */
function answerOf(url: string, status: number, text: string): ApiResult<unknown> {
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: a 2xx is reported by decoded(), an error by its status
  }
  if (status >= 200 && status < 300) return { ok: true, value: body };
  const said = (body as { message?: unknown } | undefined)?.message;
  const message = typeof said === "string" ? said : `HTTP ${status}`;
  return { ok: false, failure: statusFailure(url, status, message) };
}

/** What an error status means for the user, and its exit code. */
function statusFailure(url: string, status: number, message: string): ApiFailure {
  if (status === 401)
    return {
      message: `the daemon at ${url} refused the token: pass --token or set $PM_SERVER_TOKEN to its server.token`,
      exitCode: EX_NOPERM,
    };
  if (status === 403) return { message: `the daemon at ${url} refused: ${message}`, exitCode: EX_NOPERM };
  if (status === 404 && message.startsWith("no API route"))
    return {
      message: `no silences API at ${url} (${message}): is it pragma-monitor, recent enough to have silences?`,
      exitCode: EX_UNAVAILABLE,
    };
  if (status === 404 || status === 409 || status === 429) return { message, exitCode: EX_DATAERR };
  if (status >= 400 && status < 500) return { message: `the daemon refused: ${message}`, exitCode: EX_USAGE };
  return { message: `the daemon at ${url} failed (HTTP ${status}): ${message}`, exitCode: EX_UNAVAILABLE };
}

/** A request that got no answer: the daemon is not there, or did not answer in time. */
function unreachable(url: string, error: unknown): ApiFailure {
  if (error instanceof HttpClientError && error.code === "PM_HTTP_TIMEOUT")
    return {
      message: `no answer from ${url} within ${REQUEST_TIMEOUT_MS / 1_000} s`,
      exitCode: EX_UNAVAILABLE,
    };
  if (error instanceof HttpClientError && error.code === "PM_HTTP_ABORTED")
    return { message: "interrupted", exitCode: EX_UNAVAILABLE };
  const code = errorCode(error);
  const reason = code === "ECONNREFUSED" ? "connection refused" : (code ?? (error as Error).message);
  return {
    message: `cannot reach ${url} (${reason}): is the daemon running at ${url}? --url sets where`,
    exitCode: EX_UNAVAILABLE,
  };
}

/** A 2xx body checked against what the API promises, then mapped; an answer of another shape is a failure. */
function decoded<S extends z.ZodType, T>(
  url: string,
  result: ApiResult<unknown>,
  schema: S,
  map: (value: z.output<S>) => T,
): ApiResult<T> {
  if (!result.ok) return result;
  const parsed = schema.safeParse(result.value);
  if (parsed.success) return { ok: true, value: map(parsed.data) };
  return {
    ok: false,
    failure: {
      message: `unexpected answer from ${url}${SILENCES_PATH} (not the silences API's shape)`,
      exitCode: EX_UNAVAILABLE,
    },
  };
}
