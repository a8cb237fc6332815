// The API's route set: every read route is registered and documented in the OpenAPI document from its own schemas.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { apiRoutes, type ApiDeps } from "../../../src/http/api/index.js";
import { createSilencer } from "../../../src/pipeline/silencer.js";
import { QUIET_READ_DEPS } from "./fixtures.js";
import { serveApi, type ServedApi } from "./serve.js";

const stateDir = mkdtempSync(join(tmpdir(), "pm-api-index-"));
const deps: ApiDeps = {
  ...QUIET_READ_DEPS,
  silencer: createSilencer({
    path: join(stateDir, "silences.json"),
    nowMs: () => 0,
    logger: pino({ level: "silent" }),
  }),
};

interface Operation {
  parameters: { name: string; in: string }[];
  responses: Record<string, { content: { "application/json": { schema: unknown } } }>;
}

let api: ServedApi;
beforeAll(async () => {
  api = await serveApi(apiRoutes(deps));
});
afterAll(async () => {
  await api.close();
  rmSync(stateDir, { recursive: true, force: true });
});

describe("apiRoutes", () => {
  it("serves every read route", async () => {
    for (const path of ["/alerts", "/alerts/history", "/targets", "/status", "/openapi.json"])
      expect((await api.get(path)).status, path).toBe(200);
  });

  it("documents each read route's query parameters and answer schema in the OpenAPI document", async () => {
    const { body } = await api.get("/openapi.json");
    const paths = (body as { paths: Record<string, { get: Operation }> }).paths;
    const parameters = (path: string): string[] =>
      (paths[`/api/v1${path}`]?.get.parameters ?? []).map((p) => `${p.in}:${p.name}`);
    expect(parameters("/alerts")).toEqual([
      "query:fingerprint",
      "query:pair",
      "query:rule",
      "query:severity",
      "query:silenced",
      "query:state",
    ]);
    expect(parameters("/alerts/history")).toEqual([
      "query:since",
      "query:limit",
      "query:type",
      "query:fingerprint",
      "query:pair",
      "query:rule",
      "query:severity",
      "query:silenced",
    ]);
    expect(parameters("/targets")).toEqual(["query:kind", "query:points"]);
    expect(parameters("/status")).toEqual([]);
    const answer = (path: string): string =>
      JSON.stringify(paths[`/api/v1${path}`]?.get.responses["200"]?.content["application/json"].schema);
    expect(answer("/alerts")).toContain('"inhibitedBy"');
    expect(answer("/alerts/history")).toContain('"nextSince"');
    expect(answer("/targets")).toContain('"nextPollAt"');
    expect(answer("/status")).toContain('"configGeneration"');
  });
});
