// One route of the operator HTTP API (/api/v1): method, path template, zod schemas (validation and OpenAPI) and handler.
import type { z } from "zod";

/** Methods the API answers; reads are GET, writes POST and DELETE. */
export type ApiMethod = "GET" | "POST" | "DELETE";

/** What a handler receives once the router has checked access and validated the query and body. */
export interface ApiRequest<Query, Body> {
  /** Path parameters of the template, e.g. `{ id: "…" }` for "/silences/{id}" (decoded). */
  readonly params: Readonly<Record<string, string>>;
  readonly query: Query;
  readonly body: Body;
}

/** A handler's answer: the status and its JSON body (tests check it against `responses[status].schema`). */
export interface ApiResponse {
  readonly status: number;
  readonly body: unknown;
}

/** One documented answer of a route. */
export interface ApiResponseSpec {
  readonly description: string;
  /** Shape of the body; absent for answers whose body is the router's error object. */
  readonly schema?: z.ZodType;
}

/** A route: what the router validates, what OpenAPI documents, and the handler. */
export interface ApiRoute<Query = unknown, Body = unknown> {
  readonly method: ApiMethod;
  /** Path under /api/v1 with `{name}` parameters: "/silences/{id}". */
  readonly path: string;
  /** One line for the OpenAPI document and docs/api.md. */
  readonly summary: string;
  /** OpenAPI tag grouping the route ("alerts", "silences", ...). */
  readonly tag: string;
  /** Query parameters: a z.object of optional fields (values arrive as strings; use z.coerce for numbers). */
  readonly query?: z.ZodType<Query>;
  /** JSON body of a write. */
  readonly body?: z.ZodType<Body>;
  readonly responses: Readonly<Record<number, ApiResponseSpec>>;
  handle(request: ApiRequest<Query, Body>): ApiResponse | Promise<ApiResponse>;
}

/** Declare a route with its query and body types inferred from its schemas. */
export function defineRoute<Query = undefined, Body = undefined>(
  route: ApiRoute<Query, Body>,
): ApiRoute<Query, Body> {
  return route;
}

/** A route of any query and body, as the router and the OpenAPI builder hold them (the router validates both first). */
export type AnyApiRoute = ApiRoute<unknown, unknown>;
