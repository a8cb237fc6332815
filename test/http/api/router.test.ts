// Contract of the API router: token, Origin, content type, body limit, validation and the generated OpenAPI document.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createAccessPolicy } from "../../../src/http/access.js";
import { openApiDocument } from "../../../src/http/api/openapi.js";
import { defineRoute, type AnyApiRoute } from "../../../src/http/api/route.js";
import { API_MAX_BODY_BYTES, createApiRouter } from "../../../src/http/api/router.js";

const echo = defineRoute({
  method: "POST",
  path: "/things/{id}",
  summary: "echo",
  tag: "test",
  query: z.object({ limit: z.coerce.number().int().positive().optional() }),
  body: z.strictObject({ name: z.string().min(1) }),
  responses: { 201: { description: "echoed", schema: z.object({ id: z.string(), name: z.string() }) } },
  handle: ({ params, body }) => ({ status: 201, body: { id: params["id"] ?? "", name: body.name } }),
});
const list = defineRoute({
  method: "GET",
  path: "/things",
  summary: "list",
  tag: "test",
  query: z.object({ pair: z.string().optional(), limit: z.coerce.number().int().max(10).optional() }),
  responses: { 200: { description: "listed", schema: z.object({ query: z.unknown() }) } },
  handle: ({ query }) => ({ status: 200, body: { query } }),
});
const routes: AnyApiRoute[] = [echo, list];

let server: Server;
let base = "";
let token = "";

beforeAll(async () => {
  const handler = createApiRouter({
    routes,
    access: createAccessPolicy({ host: "127.0.0.1", allowedHosts: [], allowedOrigins: [] }),
    token: () => token,
  });
  server = createServer((request, response) => {
    void handler(request, response, new URL(request.url ?? "/", "http://localhost"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const post = (path: string, body: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${base}${path}`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
  });

describe("API router", () => {
  it("routes with path parameters, validated query and body", async () => {
    const response = await post("/things/a%2Fb?limit=3", JSON.stringify({ name: "x" }));
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ id: "a/b", name: "x" });
    const listed = await fetch(`${base}/things?pair=BTC/USD&limit=4`);
    expect(await listed.json()).toEqual({ query: { pair: "BTC/USD", limit: 4 } });
  });

  it.each<[string, () => Promise<Response>, number, string]>([
    ["unknown path", () => fetch(`${base}/nothing`), 404, "not_found"],
    ["wrong method", () => fetch(`${base}/things`, { method: "DELETE" }), 405, "method_not_allowed"],
    ["invalid query", () => fetch(`${base}/things?limit=11`), 400, "invalid_request"],
    ["invalid body", () => post("/things/1", JSON.stringify({ name: "" })), 400, "invalid_request"],
    [
      "unknown body field",
      () => post("/things/1", JSON.stringify({ name: "x", extra: 1 })),
      400,
      "invalid_request",
    ],
    ["not JSON", () => post("/things/1", "{"), 400, "invalid_json"],
    [
      "form post (CSRF)",
      () => post("/things/1", "name=x", { "content-type": "text/plain" }),
      415,
      "unsupported_media_type",
    ],
    [
      "too large",
      () => post("/things/1", JSON.stringify({ name: "x".repeat(API_MAX_BODY_BYTES) })),
      413,
      "body_too_large",
    ],
    [
      "cross-origin write",
      () => post("/things/1", JSON.stringify({ name: "x" }), { origin: "http://evil.example" }),
      403,
      "forbidden_origin",
    ],
  ])("%s is refused with its code", async (_name, request, status, error) => {
    const response = await request();
    expect(response.status).toBe(status);
    const body = (await response.json()) as { error: string; message: string };
    expect(body.error).toBe(error);
    expect(body.message.length).toBeGreaterThan(0);
  });

  it("names the allowed methods on 405 and the field on 400", async () => {
    const wrong = await fetch(`${base}/things`, { method: "DELETE" });
    expect(wrong.headers.get("allow")).toBe("GET");
    const invalid = (await (await fetch(`${base}/things?limit=11`)).json()) as { message: string };
    expect(invalid.message).toMatch(/^query\.limit: /);
  });

  it("requires the token on reads and writes when one is set, by header or ?token=", async () => {
    token = "s3cret";
    try {
      expect((await fetch(`${base}/things`)).status).toBe(401);
      expect((await post("/things/1", JSON.stringify({ name: "x" }))).status).toBe(401);
      expect((await fetch(`${base}/things`, { headers: { authorization: "Bearer wrong" } })).status).toBe(
        401,
      );
      expect((await fetch(`${base}/things`, { headers: { authorization: "Bearer s3cret" } })).status).toBe(
        200,
      );
      const withQuery = await fetch(`${base}/things?token=s3cret`);
      expect(await withQuery.json()).toEqual({ query: {} });
    } finally {
      token = "";
    }
  });
});

describe("OpenAPI document", () => {
  it("documents every route with its parameters, body and responses from the same schemas", () => {
    const document = openApiDocument(routes, "1.2.3") as {
      openapi: string;
      paths: Record<
        string,
        Record<
          string,
          {
            parameters: { name: string; in: string }[];
            requestBody?: unknown;
            responses: Record<string, unknown>;
          }
        >
      >;
    };
    expect(document.openapi).toBe("3.1.0");
    const post = document.paths["/api/v1/things/{id}"]?.["post"];
    expect(post?.parameters.map((parameter) => `${parameter.in}:${parameter.name}`)).toEqual([
      "path:id",
      "query:limit",
    ]);
    expect(JSON.stringify(post?.requestBody)).toContain('"name"');
    expect(Object.keys(post?.responses ?? {})).toEqual(["201"]);
    expect(document.paths["/api/v1/things"]?.["get"]?.parameters.map((parameter) => parameter.name)).toEqual([
      "pair",
      "limit",
    ]);
  });
});
