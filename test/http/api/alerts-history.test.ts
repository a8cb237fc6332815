// Contract of GET /api/v1/alerts/history: pages of the journal in the answer's own schema, filters, gap, 400s and 401.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournaledEvent } from "../../../src/domain/events.js";
import { HISTORY_RESPONSE, alertsHistoryRoute } from "../../../src/http/api/alerts-history.js";
import { createJournal, type Journal } from "../../../src/state/journal.js";
import { payload } from "./fixtures.js";
import { serveApi, type ServedApi } from "./serve.js";

/**
 * A journal of 8 events held in a ring of 6 (seq 1 and 2 dropped): seq 3 lifecycle, then alerts of BTC
 * (warning, seq 4 and 7), ETH (critical, silenced, seq 5 and 8), SOL (info, seq 6) and the resolve of BTC.
 */
function journal(): Journal {
  const j = createJournal(6);
  const alert = (over: Parameters<typeof payload>[0]) => j.append({ type: "alert", alert: payload(over) });
  const lifecycle = (event: "started" | "config_reloaded") =>
    j.append({ type: "lifecycle", event, at: "2026-11-22T10:00:00.000Z", version: "test" });
  lifecycle("started"); // 1
  alert({ fingerprint: "dropped" }); // 2
  lifecycle("config_reloaded"); // 3
  alert({ fingerprint: "btc" }); // 4
  alert({
    fingerprint: "eth",
    severity: "critical",
    labels: { pair: "ETH/USD" },
    silencedBy: ["s-1"],
  }); // 5
  alert({ fingerprint: "sol", severity: "info", rule: "low_sources", labels: { pair: "SOL/USD" } }); // 6
  alert({ fingerprint: "btc", status: "resolved", reason: "resolved", endsAt: "2026-11-22T10:09:00.000Z" }); // 7
  alert({ fingerprint: "eth", severity: "critical", labels: { pair: "ETH/USD" }, reason: "repeat" }); // 8
  return j;
}

let api: ServedApi;
beforeAll(async () => {
  const j = journal();
  api = await serveApi([alertsHistoryRoute({ replay: (since) => j.after(since) })]);
});
afterAll(() => api.close());

/** The answer to `query` checked against the route's schema, events as `seq:fingerprint|event`. */
async function page(
  query: string,
): Promise<{ events: string[]; nextSince: number; more: boolean; gap: unknown }> {
  const { status, body } = await api.get(`/alerts/history${query}`);
  expect(status, JSON.stringify(body)).toBe(200);
  const parsed = HISTORY_RESPONSE.parse(body);
  return {
    ...parsed,
    events: parsed.events.map((e: JournaledEvent | (typeof parsed.events)[number]) =>
      e.type === "alert" ? `${e.seq}:${e.alert.fingerprint}` : `${e.seq}:${e.event}`,
    ),
  };
}

describe("GET /api/v1/alerts/history", () => {
  it.each<[string, string, Awaited<ReturnType<typeof page>>]>([
    [
      "alerts from the oldest held, with the gap of what the ring dropped",
      "",
      {
        events: ["4:btc", "5:eth", "6:sol", "7:btc", "8:eth"],
        nextSince: 8,
        more: false,
        gap: { from: 1, to: 2 },
      },
    ],
    [
      "lifecycle events on request",
      "?type=alert,lifecycle&since=2",
      {
        events: ["3:config_reloaded", "4:btc", "5:eth", "6:sol", "7:btc", "8:eth"],
        nextSince: 8,
        more: false,
        gap: null,
      },
    ],
    [
      "only lifecycle events",
      "?type=lifecycle&since=2",
      { events: ["3:config_reloaded"], nextSince: 8, more: false, gap: null },
    ],
    ["a first page", "?since=3&limit=2", { events: ["4:btc", "5:eth"], nextSince: 5, more: true, gap: null }],
    [
      "the next page",
      "?since=5&limit=2",
      { events: ["6:sol", "7:btc"], nextSince: 7, more: true, gap: null },
    ],
    ["the last page", "?since=7&limit=2", { events: ["8:eth"], nextSince: 8, more: false, gap: null }],
    ["nothing after the last seq", "?since=8", { events: [], nextSince: 8, more: false, gap: null }],
    [
      "filtered by pair",
      "?since=3&pair=ETH/USD",
      { events: ["5:eth", "8:eth"], nextSince: 8, more: false, gap: null },
    ],
    [
      "a filtered page moves on past what it skipped",
      "?since=3&pair=ETH/USD&limit=1",
      { events: ["5:eth"], nextSince: 5, more: true, gap: null },
    ],
    [
      "filtered by rule",
      "?since=3&rule=low_sources",
      { events: ["6:sol"], nextSince: 8, more: false, gap: null },
    ],
    [
      "filtered by minimum severity",
      "?since=3&severity=warning",
      { events: ["4:btc", "5:eth", "7:btc", "8:eth"], nextSince: 8, more: false, gap: null },
    ],
    [
      "silenced transitions",
      "?since=3&silenced=true",
      { events: ["5:eth"], nextSince: 8, more: false, gap: null },
    ],
    [
      "lifecycle events pass the alert filters",
      "?since=2&type=lifecycle,alert&pair=SOL/USD",
      { events: ["3:config_reloaded", "6:sol"], nextSince: 8, more: false, gap: null },
    ],
  ])("%s", async (_name, query, expected) => {
    expect(await page(query)).toEqual(expected);
  });

  it("answers events in the journal's shape (the alert payload whole)", async () => {
    const { body } = await api.get("/alerts/history?since=6&limit=1");
    expect(body).toMatchObject({
      events: [
        {
          type: "alert",
          seq: 7,
          alert: { fingerprint: "btc", status: "resolved", endsAt: "2026-11-22T10:09:00.000Z" },
        },
      ],
    });
  });

  it.each<[string, string, string]>([
    ["a negative since", "?since=-1", "query.since"],
    ["a since that is not a number", "?since=abc", "query.since"],
    ["a fractional limit", "?limit=1.5", "query.limit"],
    ["a limit of 0", "?limit=0", "query.limit"],
    ["a limit over 1000", "?limit=1001", "query.limit"],
    ["an unknown type", "?type=price", "query.type[0]"],
    ["an unknown severity", "?severity=high", "query.severity"],
    ["an unknown parameter", "?from=3", "query.from"],
  ])("refuses %s with a 400 naming the parameter", async (_name, query, path) => {
    const { status, body } = await api.get(`/alerts/history${query}`);
    expect(status).toBe(400);
    expect((body as { message: string }).message.startsWith(`${path}: `), JSON.stringify(body)).toBe(true);
  });

  it("accepts the largest limit", async () => {
    expect((await api.get("/alerts/history?limit=1000")).status).toBe(200);
  });

  it("requires the token when one is set", async () => {
    api.token = "s3cret";
    try {
      expect((await api.get("/alerts/history")).status).toBe(401);
      expect((await api.get("/alerts/history?token=s3cret")).status).toBe(200);
    } finally {
      api.token = "";
    }
  });
});
