// Contract of GET /api/v1/status: the answer's own schema, redacted upstream, counts from the alerts, readiness, 401.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STATUS_RESPONSE } from "../../../src/http/api/status-schema.js";
import { statusRoute, type StatusDeps } from "../../../src/http/api/status.js";
import { ALERTS_DEPS } from "./fixtures.js";
import { serveApi, type ServedApi } from "./serve.js";

const STARTED_AT_MS = Date.parse("2026-11-22T10:00:00.000Z");

const deps: StatusDeps = {
  ...ALERTS_DEPS,
  version: "1.2.3",
  nowMs: () => STARTED_AT_MS + 90_000,
  startedAtMs: () => STARTED_AT_MS,
  configGeneration: () => 2,
  cluster: () => null,
  readiness: () => ({ ready: false, reasons: ["1 sink(s) failing: ops (slack, sink_error firing)"] }),
  sinks: () => [
    {
      name: "ops",
      kind: "slack",
      pending: 3,
      failing: true,
      consecutiveFailures: 5,
      lastError: "http_error 500",
      running: true,
      groups: 2,
    },
  ],
  upstream: () => ({ url: "https://user:hunter2@pragma.example/api?apiKey=k", simulator: false }),
  targetCount: () => 9,
  journal: { lastSeq: () => 1042, oldestSeq: () => 43 },
};

let api: ServedApi;
beforeAll(async () => {
  api = await serveApi([statusRoute(deps)]);
});
afterAll(() => api.close());

describe("GET /api/v1/status", () => {
  it("answers in its schema: version, uptime, generation, readiness, redacted upstream, sinks, counts", async () => {
    const { status, body } = await api.get("/status");
    expect(status).toBe(200);
    expect(STATUS_RESPONSE.parse(body)).toEqual({
      version: "1.2.3",
      startedAt: "2026-11-22T10:00:00.000Z",
      uptimeMs: 90_000,
      configGeneration: 2,
      readiness: { ready: false, reasons: ["1 sink(s) failing: ops (slack, sink_error firing)"] },
      upstream: { url: "https://user:[redacted]@pragma.example/api?apiKey=[redacted]", simulator: false },
      sinks: [
        {
          name: "ops",
          kind: "slack",
          running: true,
          failing: true,
          pending: 3,
          consecutiveFailures: 5,
          lastError: "http_error 500",
          groups: 2,
        },
      ],
      // fixtures: 4 firing (one silenced, one inhibited), 1 pending (silenced and inhibited)
      counts: { targets: 9, firing: 4, pending: 1, silenced: 2, inhibited: 2 },
      journal: { lastSeq: 1042, oldestSeq: 43 },
      cluster: null,
    });
    expect(JSON.stringify(body)).not.toContain("hunter2");
  });

  it("refuses a query parameter it does not take", async () => {
    const { status, body } = await api.get("/status?verbose=1");
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: "invalid_request" });
  });

  it("requires the token when one is set", async () => {
    api.token = "s3cret";
    try {
      expect((await api.get("/status")).status).toBe(401);
      expect((await api.get("/status", { authorization: "Bearer s3cret" })).status).toBe(200);
    } finally {
      api.token = "";
    }
  });
});
