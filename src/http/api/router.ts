// Dispatches /api/v1 requests to their routes: token, Origin and content-type rules first, then zod-validated query and body.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import { firstProblem, jsonPath } from "../../json-path.js";
import { createTokenCheck, presentedToken } from "../../sinks/ws/auth.js";
import type { AccessPolicy } from "../access.js";
import { API_PREFIX } from "./openapi.js";
import type { AnyApiRoute, ApiResponse } from "./route.js";

/** What the router needs besides its routes. */
export interface ApiRouterOptions {
  readonly routes: readonly AnyApiRoute[];
  /** The Host/Origin policy of the daemon's port: a write from another origin is refused (no CSRF). */
  readonly access: AccessPolicy;
  /** server.token ("" = none); read per request so a reload applies at once. */
  readonly token: () => string;
}

/** Largest JSON body a write may send. */
export const API_MAX_BODY_BYTES = 64 * 1024;

/** Answers one request whose path starts with /api/v1/ (the caller checked the Host already). */
export type ApiHandler = (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<void>;

/** A compiled route: its template as a regular expression with the parameter names in order. */
interface CompiledRoute {
  readonly route: AnyApiRoute;
  readonly pattern: RegExp;
  readonly names: readonly string[];
}

/** Compile "/silences/{id}" into /^\/silences\/([^/]+)$/ and ["id"]. */
function compile(route: AnyApiRoute): CompiledRoute {
  const names: string[] = [];
  const source = route.path
    .split("/")
    .map((part) => {
      const match = /^\{(\w+)\}$/.exec(part);
      if (match?.[1] === undefined) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      names.push(match[1]);
      return "([^/]+)";
    })
    .join("/");
  return { route, pattern: new RegExp(`^${source}$`), names };
}

/** Build the handler of the API under /api/v1. */
export function createApiRouter(options: ApiRouterOptions): ApiHandler {
  const compiled = options.routes.map(compile);
  let tokenCheck = { token: "", check: createTokenCheck("") };
  const authorized = (presented: string | null): boolean => {
    const token = options.token();
    if (token !== tokenCheck.token) tokenCheck = { token, check: createTokenCheck(token) };
    return tokenCheck.check(presented);
  };
  return async (request, response, url) => {
    const path = url.pathname.slice(API_PREFIX.length);
    const matching = compiled.filter((entry) => entry.pattern.test(path));
    if (matching.length === 0)
      return send(response, refusal(404, "not_found", `no API route ${url.pathname}`));
    const method = request.method === "HEAD" ? "GET" : (request.method ?? "");
    const entry = matching.find((candidate) => candidate.route.method === method);
    if (entry === undefined) {
      response.setHeader(
        "Allow",
        [...new Set(matching.map((candidate) => candidate.route.method))].join(", "),
      );
      return send(
        response,
        refusal(405, "method_not_allowed", `${method} is not allowed on ${url.pathname}`),
      );
    }
    if (!authorized(presentedToken(request, url))) {
      response.setHeader("WWW-Authenticate", 'Bearer realm="pragma-monitor"');
      return send(response, refusal(401, "unauthorized", "a valid bearer token is required"));
    }
    send(response, await answer(options, entry, path, request, url));
  };
}

/** Check and validate the request, then run the route's handler. */
async function answer(
  options: ApiRouterOptions,
  entry: CompiledRoute,
  path: string,
  request: IncomingMessage,
  url: URL,
): Promise<ApiResponse> {
  const { route } = entry;
  const values = entry.pattern.exec(path)?.slice(1) ?? [];
  const params = Object.fromEntries(
    entry.names.map((name, index) => [name, decodeURIComponent(values[index] ?? "")]),
  );
  const query = validate(route.query, queryObject(url), "query");
  if ("status" in query) return query;
  if (route.method === "GET") return route.handle({ params, query: query.value, body: undefined });
  if (!options.access.originAllowed(request))
    return refusal(
      403,
      "forbidden_origin",
      "writes are accepted only from the daemon's own page or server.allowedOrigins",
    );
  const raw = await readJson(request, route.body !== undefined);
  if ("status" in raw) return raw;
  const body = validate(route.body, raw.value, "body");
  if ("status" in body) return body;
  return route.handle({ params, query: query.value, body: body.value });
}

/** The query string as an object: a repeated key becomes an array, `token` (auth) is left out. */
function queryObject(url: URL): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [key, value] of url.searchParams) {
    if (key === "token") continue;
    const previous = result[key];
    result[key] =
      previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return result;
}

/** Parse `raw` with `schema` (none: accept nothing but absence); a refusal names every issue. */
function validate(
  schema: z.ZodType | undefined,
  raw: unknown,
  where: "query" | "body",
): { readonly value: unknown } | ApiResponse {
  if (schema === undefined) return { value: undefined };
  const result = schema.safeParse(raw);
  if (result.success) return { value: result.data };
  const { path, reason } = firstProblem(result.error, where);
  return refusal(400, "invalid_request", `${path}: ${reason}`, {
    issues: result.error.issues.map((issue) => ({
      path: jsonPath(where, issue.path),
      reason: issue.message,
    })),
  });
}

/** Read a write's JSON body: application/json only, at most API_MAX_BODY_BYTES. */
async function readJson(
  request: IncomingMessage,
  wanted: boolean,
): Promise<{ readonly value: unknown } | ApiResponse> {
  const type = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  const length = Number(request.headers["content-length"] ?? "0");
  if (!wanted && (length === 0 || Number.isNaN(length)) && request.headers["transfer-encoding"] === undefined)
    return { value: undefined };
  if (type !== "application/json")
    return refusal(415, "unsupported_media_type", "writes take a JSON body: Content-Type: application/json");
  if (length > API_MAX_BODY_BYTES)
    return refusal(413, "body_too_large", `bodies are limited to ${API_MAX_BODY_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > API_MAX_BODY_BYTES)
      return refusal(413, "body_too_large", `bodies are limited to ${API_MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  try {
    return { value: JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown };
  } catch (error) {
    return refusal(400, "invalid_json", `the body is not JSON: ${(error as Error).message}`);
  }
}

/** An error answer in the API's one error shape. */
export function refusal(
  status: number,
  error: string,
  message: string,
  extra: Readonly<Record<string, unknown>> = {},
): ApiResponse {
  return { status, body: { error, message, ...extra } };
}

/** Write a JSON answer that no cache keeps. */
function send(response: ServerResponse, answer: ApiResponse): void {
  const text = JSON.stringify(answer.body);
  response.writeHead(answer.status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store",
  });
  response.end(text);
}
