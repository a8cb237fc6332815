// The OpenAPI 3.1 document of the operator API, built from the routes' own zod schemas so it cannot drift.
import { z } from "zod";
import type { AnyApiRoute } from "./route.js";

/** Prefix of every API path. */
export const API_PREFIX = "/api/v1";

/** JSON Schema of a zod schema, as OpenAPI 3.1 takes it (JSON Schema 2020-12). */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  return rest;
}

/** Path and query parameters of a route: path ones from its template, query ones from its query object. */
function parameters(route: AnyApiRoute): Record<string, unknown>[] {
  const path = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => ({
    name: match[1],
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  if (route.query === undefined) return path;
  const schema = jsonSchema(route.query, "input");
  const properties = (schema["properties"] ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((schema["required"] ?? []) as string[]);
  const query = Object.entries(properties).map(([name, property]) => ({
    name,
    in: "query",
    required: required.has(name),
    ...(typeof property["description"] === "string" ? { description: property["description"] } : {}),
    schema: property,
  }));
  return [...path, ...query];
}

/** The OpenAPI operation object of one route. */
function operation(route: AnyApiRoute): Record<string, unknown> {
  const responses = Object.fromEntries(
    Object.entries(route.responses).map(([status, spec]) => [
      status,
      {
        description: spec.description,
        content: {
          "application/json": {
            schema:
              spec.schema === undefined
                ? { $ref: "#/components/schemas/Error" }
                : jsonSchema(spec.schema, "output"),
          },
        },
      },
    ]),
  );
  return {
    summary: route.summary,
    tags: [route.tag],
    operationId: `${route.method.toLowerCase()}${route.path.replace(/\{(\w+)\}/g, "By_$1").replace(/[^A-Za-z0-9_]+(\w)?/g, (_, next: string | undefined) => (next ?? "").toUpperCase())}`,
    parameters: parameters(route),
    ...(route.body === undefined
      ? {}
      : {
          requestBody: {
            required: true,
            content: { "application/json": { schema: jsonSchema(route.body, "input") } },
          },
        }),
    responses,
  };
}

/** Error body shared by every refusal. */
const ERROR_SCHEMA = z.object({
  error: z.string().describe("stable code: unauthorized, forbidden_origin, invalid_request, not_found, ..."),
  message: z.string(),
  issues: z.array(z.object({ path: z.string(), reason: z.string() })).optional(),
});

/** Build the whole document for `routes`. */
export function openApiDocument(routes: readonly AnyApiRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const key = `${API_PREFIX}${route.path}`;
    paths[key] = { ...paths[key], [route.method.toLowerCase()]: operation(route) };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "pragma-monitor operator API",
      version,
      description: "Alerts, targets, status and silences of one pragma-monitor daemon. See docs/api.md.",
    },
    security: [{ bearer: [] }, {}],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "server.token, when set" } },
      schemas: { Error: jsonSchema(ERROR_SCHEMA, "output") },
    },
    paths,
  };
}
