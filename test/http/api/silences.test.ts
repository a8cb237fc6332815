// Contract of the silence routes through the router, over a real socket: every answer checked against its route's schema.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Silence } from "../../../src/domain/silence.js";
import { SILENCE_LIMITS } from "../../../src/domain/silence-set.js";
import { createAccessPolicy } from "../../../src/http/access.js";
import { apiRoutes } from "../../../src/http/api/index.js";
import { openApiDocument } from "../../../src/http/api/openapi.js";
import type { AnyApiRoute } from "../../../src/http/api/route.js";
import { API_MAX_BODY_BYTES, createApiRouter } from "../../../src/http/api/router.js";
import { QUIET_READ_DEPS } from "./fixtures.js";
import { createSilencer, type Silencer } from "../../../src/pipeline/silencer.js";
import { silenceFilePath, writeSilences } from "../../../src/state/silence-file.js";
import { HOUR_MS, MINUTE_MS, T0, iso, matcher, silence } from "../../domain/helpers.js";
import { createVirtualClock, type VirtualClock } from "../../pipeline/helpers.js";
import { captureLogger } from "../../sinks/chatops/helpers.js";

/** Answers the router gives before any route runs: not part of a route's own contract. */
const ROUTER_STATUSES = new Set([405, 413, 415]);
const ERROR_BODY = z.object({
  error: z.string().min(1),
  message: z.string().min(1),
  issues: z.array(z.object({ path: z.string(), reason: z.string() })).optional(),
});

interface Api {
  readonly base: string;
  readonly origin: string;
  readonly clock: VirtualClock;
  readonly stateDir: string;
  readonly silencer: Silencer;
  readonly routes: readonly AnyApiRoute[];
  /** server.token ("" = none) */
  token: string;
  /** The bearer token the client presents ("" = none). */
  bearer: string;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The API on 127.0.0.1:0 over a silencer on a temp state dir at T0 (virtual time); `stored` written first. */
async function startApi(
  options: { stored?: readonly Silence[]; maintenance?: (nowMs: number) => readonly Silence[] } = {},
): Promise<Api> {
  const stateDir = mkdtempSync(join(tmpdir(), "pm-api-silences-"));
  cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
  const path = silenceFilePath(stateDir);
  if (options.stored !== undefined) writeSilences(path, options.stored);
  const clock = createVirtualClock(T0);
  let next = 0;
  const silencer = createSilencer({
    path,
    nowMs: clock.nowMs,
    logger: captureLogger().logger,
    newId: () => `id-${++next}`,
    setTimer: clock.setTimer,
    clearTimer: clock.clearTimer,
    ...(options.maintenance === undefined ? {} : { maintenance: options.maintenance }),
  });
  const routes = apiRoutes({ ...QUIET_READ_DEPS, nowMs: clock.nowMs, silencer });
  const api = { clock, stateDir, silencer, routes, token: "", bearer: "" } as Api;
  const handler = createApiRouter({
    routes,
    access: createAccessPolicy({ host: "127.0.0.1", allowedHosts: [], allowedOrigins: [] }),
    token: () => api.token,
  });
  const server: Server = createServer((request, response) => {
    void handler(request, response, new URL(request.url ?? "/", "http://localhost"));
  });
  server.keepAliveTimeout = 50;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(api, { base: `${origin}/api/v1`, origin });
}

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * Send one request to the route `method template` and check the answer against that route's contract: a status
 * it declares (or one of the router's own), with a body its schema accepts, else the API's error shape.
 */
async function call(
  api: Api,
  method: "GET" | "POST" | "DELETE",
  template: string,
  path: string,
  init: { body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const route = api.routes.find((candidate) => candidate.method === method && candidate.path === template);
  if (route === undefined) throw new Error(`no route ${method} ${template}`);
  const text = init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
  const response = await fetch(`${api.base}${path}`, {
    method,
    ...(text === undefined ? {} : { body: text }),
    headers: {
      ...(text === undefined ? {} : { "content-type": "application/json" }),
      ...(api.bearer === "" ? {} : { authorization: `Bearer ${api.bearer}` }),
      ...init.headers,
    },
  });
  const body: unknown = await response.json();
  const { status } = response;
  if (!ROUTER_STATUSES.has(status))
    expect(Object.keys(route.responses), `${method} ${template} answered an undeclared ${status}`).toContain(
      String(status),
    );
  const schema = route.responses[status]?.schema;
  if (schema !== undefined) schema.parse(body);
  else ERROR_BODY.parse(body);
  return { status, body };
}

const get = (api: Api, id?: string): Promise<Answer> =>
  id === undefined
    ? call(api, "GET", "/silences", "/silences")
    : call(api, "GET", "/silences/{id}", `/silences/${encodeURIComponent(id)}`);
const post = (api: Api, body: unknown, headers?: Record<string, string>): Promise<Answer> =>
  call(api, "POST", "/silences", "/silences", { body, ...(headers === undefined ? {} : { headers }) });
const remove = (api: Api, id: string, headers?: Record<string, string>): Promise<Answer> =>
  call(api, "DELETE", "/silences/{id}", `/silences/${encodeURIComponent(id)}`, {
    ...(headers === undefined ? {} : { headers }),
  });

/** A valid postable silence (Alertmanager v2 body). */
function postable(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    matchers: [{ name: "pair", value: "BTC/USD", isRegex: false, isEqual: true }],
    startsAt: iso(T0),
    endsAt: iso(T0 + HOUR_MS),
    createdBy: "alice",
    comment: "deploy",
    ...overrides,
  };
}

const idOf = (answer: Answer): string => (answer.body as { silenceID: string }).silenceID;
const errorOf = (answer: Answer): z.infer<typeof ERROR_BODY> => ERROR_BODY.parse(answer.body);

describe("silence routes", () => {
  it("lists nothing at first", async () => {
    const api = await startApi();
    expect(await get(api)).toEqual({ status: 200, body: [] });
  });

  it("creates a silence, answers its id, and serves it with its state", async () => {
    const api = await startApi();
    const created = await post(api, postable({ startsAt: iso(T0 - HOUR_MS) }));
    expect(created).toEqual({ status: 200, body: { silenceID: "id-1" } });
    const expected = {
      id: "id-1",
      matchers: [{ name: "pair", value: "BTC/USD", isRegex: false, isEqual: true }],
      startsAt: iso(T0),
      endsAt: iso(T0 + HOUR_MS),
      createdBy: "alice",
      comment: "deploy",
      updatedAt: iso(T0),
      status: { state: "active" },
    };
    expect(await get(api, "id-1")).toEqual({ status: 200, body: expected });
    expect(await get(api)).toEqual({ status: 200, body: [expected] });
  });

  it("takes isEqual as true when absent, as Alertmanager does", async () => {
    const api = await startApi();
    const { isEqual: _omitted, ...bare } = matcher("pair", "=~", "BTC/.*");
    const id = idOf(await post(api, postable({ matchers: [bare] })));
    expect((await get(api, id)).body).toMatchObject({ matchers: [{ ...bare, isEqual: true }] });
  });

  it("lists active, then pending, then expired silences", async () => {
    const api = await startApi();
    const pending = idOf(
      await post(api, postable({ startsAt: iso(T0 + HOUR_MS), endsAt: iso(T0 + 2 * HOUR_MS) })),
    );
    const active = idOf(await post(api, postable()));
    const expired = idOf(await post(api, postable({ matchers: [matcher("pair", "=", "ETH/USD")] })));
    await remove(api, expired);
    const listed = (await get(api)).body as { id: string; status: { state: string } }[];
    expect(listed.map((s) => [s.id, s.status.state])).toEqual([
      [active, "active"],
      [pending, "pending"],
      [expired, "expired"],
    ]);
  });

  it("updates a silence in place when its matchers stay, and replaces it when they change", async () => {
    const api = await startApi();
    const id = idOf(await post(api, postable()));
    api.clock.advance(MINUTE_MS);
    expect(await post(api, postable({ id, comment: "longer", endsAt: iso(T0 + 3 * HOUR_MS) }))).toEqual({
      status: 200,
      body: { silenceID: id },
    });
    expect((await get(api, id)).body).toMatchObject({
      comment: "longer",
      startsAt: iso(T0),
      updatedAt: iso(T0 + MINUTE_MS),
    });
    const replacement = idOf(await post(api, postable({ id, matchers: [matcher("pair", "=", "ETH/USD")] })));
    expect(replacement).not.toBe(id);
    expect((await get(api, id)).body).toMatchObject({
      endsAt: iso(T0 + MINUTE_MS),
      status: { state: "expired" },
    });
    expect((await get(api, replacement)).body).toMatchObject({ status: { state: "active" } });
  });

  it("expires a silence with DELETE; a second DELETE is a conflict", async () => {
    const api = await startApi();
    const id = idOf(await post(api, postable()));
    api.clock.advance(MINUTE_MS);
    expect(await remove(api, id)).toEqual({ status: 200, body: {} });
    expect((await get(api, id)).body).toMatchObject({
      endsAt: iso(T0 + MINUTE_MS),
      status: { state: "expired" },
    });
    const again = await remove(api, id);
    expect(again.status).toBe(409);
    expect(errorOf(again).error).toBe("already_expired");
  });

  it.each<[string, (api: Api) => Promise<Answer>]>([
    ["GET of an unknown id", (api) => get(api, "nope")],
    ["DELETE of an unknown id", (api) => remove(api, "nope")],
    ["POST updating an unknown id", (api) => post(api, postable({ id: "nope" }))],
  ])("%s is 404", async (_name, request) => {
    const api = await startApi();
    const answer = await request(api);
    expect(answer.status).toBe(404);
    expect(errorOf(answer)).toMatchObject({
      error: "not_found",
      message: expect.stringContaining("nope") as unknown,
    });
  });

  it("refuses a silence over the live limit with 429", async () => {
    const stored = Array.from({ length: SILENCE_LIMITS.maxLive }, (_, i) =>
      silence(`s${i}`, T0 - HOUR_MS, T0 + HOUR_MS, [matcher("pair", "=", `T${i}/USD`)]),
    );
    const api = await startApi({ stored });
    const answer = await post(api, postable());
    expect(answer.status).toBe(429);
    expect(errorOf(answer).error).toBe("too_many_silences");
  });

  it("answers 503 and changes nothing when the silences file cannot be written", async () => {
    const api = await startApi();
    const id = idOf(await post(api, postable()));
    const before = await get(api);
    rmSync(api.stateDir, { recursive: true });
    writeFileSync(api.stateDir, "a file where the state directory was");
    for (const answer of [await post(api, postable({ comment: "another" })), await remove(api, id)]) {
      expect(answer.status).toBe(503);
      expect(errorOf(answer).error).toBe("state_unwritable");
    }
    expect(await get(api)).toEqual(before);
  });
});

describe("silence routes: invalid bodies", () => {
  const bare = postable();
  const { matchers: _none, ...withoutMatchers } = bare;
  const one = (fields: Record<string, unknown>): Record<string, unknown> =>
    postable({ matchers: [{ name: "pair", value: "BTC/USD", isRegex: false, isEqual: true, ...fields }] });
  it.each<[string, unknown, string]>([
    ["no matchers", withoutMatchers, "body.matchers"],
    ["empty matchers", postable({ matchers: [] }), "body.matchers"],
    ["matchers as text", postable({ matchers: 'pair="BTC/USD"' }), "body.matchers"],
    [
      "too many matchers",
      postable({ matchers: Array.from({ length: 33 }, () => one({}).matchers).flat() }),
      "body.matchers",
    ],
    ["a matcher with an empty name", one({ name: "" }), "body.matchers[0].name"],
    ["a matcher value that is a number", one({ value: 5 }), "body.matchers[0].value"],
    ["isRegex as text", one({ isRegex: "yes" }), "body.matchers[0].isRegex"],
    ["a bad regex", one({ value: "(", isRegex: true }), "body.matchers[0].value"],
    ["a matcher matching every alert", one({ value: ".*", isRegex: true }), "body.matchers"],
    ["a start that is not a time", postable({ startsAt: "tomorrow" }), "body.startsAt"],
    ["a start as a number", postable({ startsAt: T0 }), "body.startsAt"],
    ["a local time with no offset", postable({ endsAt: "2026-11-22T12:00:00" }), "body.endsAt"],
    ["an end before the start", postable({ startsAt: iso(T0 + 2 * HOUR_MS) }), "body.endsAt"],
    [
      "an end in the past",
      postable({ startsAt: iso(T0 - 2 * HOUR_MS), endsAt: iso(T0 - HOUR_MS) }),
      "body.endsAt",
    ],
    ["no author", postable({ createdBy: "" }), "body.createdBy"],
    ["no comment", postable({ comment: undefined }), "body.comment"],
    ["a comment over 4 KiB", postable({ comment: "x".repeat(4_097) }), "body.comment"],
    ["an empty id", postable({ id: "" }), "body.id"],
    ["a list instead of an object", [bare], "body"],
    ["null", null, "body"],
  ])("%s: 400 with the field's path", async (_name, body, path) => {
    const api = await startApi();
    const answer = await post(api, body);
    expect(answer.status).toBe(400);
    const { message, issues } = errorOf(answer);
    expect(message.startsWith(`${path}: `), message).toBe(true);
    if (issues !== undefined) expect(issues[0]?.path).toBe(path);
    expect((await get(api)).body).toEqual([]);
  });

  it("refuses text that is not JSON with 400", async () => {
    const api = await startApi();
    const answer = await call(api, "POST", "/silences", "/silences", { raw: '{"matchers": [' });
    expect(answer.status).toBe(400);
    expect(errorOf(answer).error).toBe("invalid_json");
  });

  it("refuses a body over the limit with 413, before reading it as a silence", async () => {
    const api = await startApi();
    const answer = await post(api, postable({ comment: "x".repeat(API_MAX_BODY_BYTES) }));
    expect(answer.status).toBe(413);
    expect(errorOf(answer).error).toBe("body_too_large");
  });
});

describe("silence routes: access", () => {
  const everyRoute: readonly [string, (api: Api, headers?: Record<string, string>) => Promise<Answer>][] = [
    ["GET /silences", (api) => get(api)],
    ["GET /silences/{id}", (api) => get(api, "id-1")],
    ["POST /silences", (api, headers) => post(api, postable(), headers)],
    ["DELETE /silences/{id}", (api, headers) => remove(api, "id-1", headers)],
  ];

  it.each(everyRoute)("%s needs the token when one is set (401)", async (_name, request) => {
    const api = await startApi();
    await post(api, postable());
    api.token = "s3cret";
    for (const bearer of ["", "wrong"]) {
      api.bearer = bearer;
      const refused = await request(api);
      expect(refused.status).toBe(401);
      expect(errorOf(refused).error).toBe("unauthorized");
    }
    api.bearer = "s3cret";
    expect((await request(api)).status).toBe(200);
  });

  it.each(everyRoute.slice(2))(
    "%s from another origin is refused (403), from the daemon's own page taken",
    async (_name, request) => {
      const api = await startApi();
      await post(api, postable({ matchers: [matcher("pair", "=", "ETH/USD")] }));
      const refused = await request(api, { origin: "http://evil.example" });
      expect(refused.status).toBe(403);
      expect(errorOf(refused).error).toBe("forbidden_origin");
      expect((await request(api, { origin: api.origin })).status).toBe(200);
    },
  );

  it.each<[string, Record<string, string>]>([
    ["a form post", { "content-type": "application/x-www-form-urlencoded" }],
    ["plain text", { "content-type": "text/plain" }],
  ])("a POST as %s is refused (415)", async (_name, headers) => {
    const api = await startApi();
    const answer = await call(api, "POST", "/silences", "/silences", {
      raw: JSON.stringify(postable()),
      headers,
    });
    expect(answer.status).toBe(415);
    expect(errorOf(answer).error).toBe("unsupported_media_type");
    expect((await get(api)).body).toEqual([]);
  });
});

describe("silence routes: maintenance windows", () => {
  const window = silence("maintenance:nightly", T0 - MINUTE_MS, T0 + HOUR_MS, [
    matcher("network", "=", "testnet"),
  ]);

  it("lists and serves a window, and refuses to change or expire it (409)", async () => {
    const api = await startApi({ maintenance: () => [window] });
    expect((await get(api, window.id)).body).toEqual({ ...window, status: { state: "active" } });
    expect(((await get(api)).body as { id: string }[]).map((s) => s.id)).toEqual([window.id]);
    for (const answer of [await remove(api, window.id), await post(api, postable({ id: window.id }))]) {
      expect(answer.status).toBe(409);
      expect(errorOf(answer).error).toBe("maintenance_window");
    }
    expect((await get(api, window.id)).body).toEqual({ ...window, status: { state: "active" } });
  });
});

describe("silence routes: OpenAPI", () => {
  it("documents each silence route with the statuses it answers", async () => {
    const api = await startApi();
    const document = openApiDocument(api.routes, "1.2.3") as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const statuses = (path: string, method: string): string[] =>
      Object.keys(document.paths[`/api/v1${path}`]?.[method]?.responses ?? {});
    expect(statuses("/silences", "get")).toEqual(["200", "401"]);
    expect(statuses("/silences", "post")).toEqual(["200", "400", "401", "403", "404", "409", "429", "503"]);
    expect(statuses("/silences/{id}", "get")).toEqual(["200", "401", "404"]);
    expect(statuses("/silences/{id}", "delete")).toEqual(["200", "401", "403", "404", "409", "503"]);
  });
});
