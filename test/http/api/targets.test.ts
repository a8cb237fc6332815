// Contract of GET /api/v1/targets: every target in the answer's own schema, ISO times, kind filter, points bound, 400s and 401.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PmError } from "../../../src/domain/errors.js";
import { TARGET_MAX_POINTS, targetView, targetsRoute } from "../../../src/http/api/targets.js";
import { TARGETS_RESPONSE } from "../../../src/http/api/targets-schema.js";
import type { TargetReport } from "../../../src/pipeline/target-report.js";
import { BTC_OFF, FUND, PUBS, T0, VAULT } from "../../domain/helpers.js";
import { serveApi, type ServedApi } from "./serve.js";

const REPORTS: readonly TargetReport[] = [
  {
    spec: BTC_OFF,
    periodMs: 1000,
    lastPoll: { endedAtMs: T0 + 20, durationMs: 20, ok: true, consecutiveFailures: 0, error: null },
    nextPollAtMs: T0 + 1000,
    ageMs: 520,
    data: {
      spec: BTC_OFF,
      lastSuccessMs: T0 + 20,
      dataAtMs: T0 - 500,
      latest: { kind: "price", price: "86184.12", comparable: true, atMs: T0 - 500, numSources: 6 },
      history: [
        { atMs: T0 - 1500, value: 86180.5 },
        { atMs: T0 - 500, value: 86184.12 },
      ],
    },
  },
  {
    spec: FUND,
    periodMs: 30_000,
    lastPoll: {
      endedAtMs: T0 + 2000,
      durationMs: 2000,
      ok: false,
      consecutiveFailures: 4,
      error: new PmError("PM_ERR_UPSTREAM_TIMEOUT", "no answer within 2000 ms", { retryable: true }),
    },
    nextPollAtMs: null,
    ageMs: 65_000,
    data: {
      spec: FUND,
      lastSuccessMs: T0 - 60_000,
      dataAtMs: T0 - 63_000,
      latest: { kind: "funding", hourlyRate: 0.0000125, atMs: T0 - 63_000 },
      history: [{ atMs: T0 - 63_000, value: 0.0000125 }],
    },
  },
  {
    spec: PUBS,
    periodMs: 15_000,
    lastPoll: { endedAtMs: T0, durationMs: 5, ok: true, consecutiveFailures: 0, error: null },
    nextPollAtMs: T0 + 15_000,
    ageMs: 4000,
    data: {
      spec: PUBS,
      lastSuccessMs: T0,
      dataAtMs: T0 - 4000,
      latest: { kind: "publishers", publishers: 3, feeds: 12, newestUpdateMs: T0 - 4000 },
      history: [],
    },
  },
  { spec: VAULT, periodMs: 15_000, lastPoll: null, nextPollAtMs: null, ageMs: null, data: null },
];

let api: ServedApi;
const pointsAsked: number[] = [];
beforeAll(async () => {
  api = await serveApi([
    targetsRoute({
      targetReports: (maxPoints) => {
        pointsAsked.push(maxPoints);
        return REPORTS;
      },
    }),
  ]);
});
afterAll(() => api.close());

describe("GET /api/v1/targets", () => {
  it("answers every target in its schema with ISO times, labels, latest poll, value and history", async () => {
    const { status, body } = await api.get("/targets");
    expect(status).toBe(200);
    const { targets } = TARGETS_RESPONSE.parse(body);
    expect(pointsAsked.at(-1)).toBe(TARGET_MAX_POINTS);
    expect(targets.map((t) => t.id)).toEqual([BTC_OFF.id, FUND.id, PUBS.id, VAULT.id]);
    expect(targets[0]).toEqual({
      id: BTC_OFF.id,
      kind: "offchain",
      labels: {
        pair: "BTC/USD",
        market: "offchain",
        entry_type: "spot",
        aggregation: "median",
        interval: "1s",
      },
      periodMs: 1000,
      lastPoll: {
        at: "2026-11-22T10:00:00.020Z",
        ok: true,
        durationMs: 20,
        consecutiveFailures: 0,
        error: null,
      },
      lastSuccessAt: "2026-11-22T10:00:00.020Z",
      ageMs: 520,
      nextPollAt: "2026-11-22T10:00:01.000Z",
      latest: {
        kind: "price",
        price: "86184.12",
        comparable: true,
        at: "2026-11-22T09:59:59.500Z",
        numSources: 6,
      },
      history: [
        { at: "2026-11-22T09:59:58.500Z", value: 86180.5 },
        { at: "2026-11-22T09:59:59.500Z", value: 86184.12 },
      ],
    });
    expect(targets[1]).toMatchObject({
      lastPoll: {
        ok: false,
        consecutiveFailures: 4,
        error: { code: "PM_ERR_UPSTREAM_TIMEOUT", message: "no answer within 2000 ms" },
      },
      nextPollAt: null,
      latest: { kind: "funding", hourlyRate: 0.0000125, at: "2026-11-22T09:58:57.000Z" },
    });
    expect(targets[2]?.latest).toEqual({
      kind: "publishers",
      publishers: 3,
      feeds: 12,
      newestUpdateAt: "2026-11-22T09:59:56.000Z",
    });
    expect(targets[3]).toEqual({
      id: VAULT.id,
      kind: "vault",
      labels: { vault: "v1" },
      periodMs: 15_000,
      lastPoll: null,
      lastSuccessAt: null,
      ageMs: null,
      nextPollAt: null,
      latest: null,
      history: [],
    });
  });

  it.each<[string, string, string[], number]>([
    ["one kind", "?kind=vault", [VAULT.id], TARGET_MAX_POINTS],
    ["kinds as a list", "?kind=offchain,publishers", [BTC_OFF.id, PUBS.id], TARGET_MAX_POINTS],
    ["fewer points", "?points=10", [BTC_OFF.id, FUND.id, PUBS.id, VAULT.id], 10],
    ["no history", "?points=0", [BTC_OFF.id, FUND.id, PUBS.id, VAULT.id], 0],
  ])("%s", async (_name, query, ids, points) => {
    const { status, body } = await api.get(`/targets${query}`);
    expect(status).toBe(200);
    expect(TARGETS_RESPONSE.parse(body).targets.map((t) => t.id)).toEqual(ids);
    expect(pointsAsked.at(-1)).toBe(points);
  });

  it.each<[string, string, string]>([
    ["an unknown kind", "?kind=candles", "query.kind[0]"],
    ["too many points", `?points=${TARGET_MAX_POINTS + 1}`, "query.points"],
    ["negative points", "?points=-1", "query.points"],
    ["an unknown parameter", "?pair=BTC/USD", "query.pair"],
  ])("refuses %s with a 400 naming the parameter", async (_name, query, path) => {
    const { status, body } = await api.get(`/targets${query}`);
    expect(status).toBe(400);
    expect((body as { message: string }).message.startsWith(`${path}: `), JSON.stringify(body)).toBe(true);
  });

  it("answers a target whose data carries a time that is not one instead of failing the request", () => {
    const [report] = REPORTS;
    if (report?.data?.latest?.kind !== "price") throw new Error("fixture: the first report is a price");
    const odd = targetView({
      ...report,
      data: {
        ...report.data,
        lastSuccessMs: Number.NaN,
        latest: { ...report.data.latest, atMs: Number.NaN },
      },
    });
    expect(odd.lastSuccessAt).toBeNull();
    expect(odd.latest).toMatchObject({ kind: "price", at: "invalid" });
  });

  it("requires the token when one is set", async () => {
    api.token = "s3cret";
    try {
      expect((await api.get("/targets")).status).toBe(401);
      expect((await api.get("/targets", { authorization: "Bearer s3cret" })).status).toBe(200);
    } finally {
      api.token = "";
    }
  });
});
