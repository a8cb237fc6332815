// Contract of GET /api/v1/alerts: firing and pending alerts in the answer's own schema, filters, order, 400s and 401.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ALERTS_RESPONSE,
  alertsRoute,
  bySeverityThenAge,
  type ApiAlert,
} from "../../../src/http/api/alerts.js";
import { ALERTS_DEPS as deps, payload } from "./fixtures.js";
import { serveApi, type ServedApi } from "./serve.js";

let api: ServedApi;
beforeAll(async () => {
  api = await serveApi([alertsRoute(deps)]);
});
afterAll(() => api.close());

/** The fingerprints of an answer, in order, after checking it against the route's own schema. */
async function fingerprints(query: string): Promise<string[]> {
  const { status, body } = await api.get(`/alerts${query}`);
  expect(status, JSON.stringify(body)).toBe(200);
  return ALERTS_RESPONSE.parse(body).alerts.map((alert) => alert.fingerprint);
}

describe("GET /api/v1/alerts", () => {
  it("answers firing and pending alerts in its schema, most severe first then oldest", async () => {
    const { status, body } = await api.get("/alerts");
    expect(status).toBe(200);
    const { alerts } = ALERTS_RESPONSE.parse(body);
    expect(alerts.map((a) => [a.fingerprint, a.state])).toEqual([
      ["f-eth-critical", "firing"],
      ["f-btc-warning-old", "firing"],
      ["p-sol-low", "pending"],
      ["f-btc-warning-new", "firing"],
      ["f-sink", "firing"],
    ]);
    const byFingerprint = new Map(alerts.map((a) => [a.fingerprint, a]));
    expect(byFingerprint.get("p-sol-low")).toMatchObject({
      status: "pending",
      startsAt: "2026-11-22T10:01:00.000Z",
      firesAt: "2026-11-22T10:11:00.000Z",
      silencedBy: ["s-2"],
      inhibitedBy: ["u-sol"],
    });
    expect(byFingerprint.get("f-eth-critical")).toMatchObject({
      status: "firing",
      firesAt: null,
      silencedBy: ["s-1"],
      inhibitedBy: [],
    });
    expect(byFingerprint.get("f-btc-warning-new")).toMatchObject({
      inhibitedBy: ["u-btc"],
      reason: "repeat",
    });
    // silencedBy is always an array, also where the payload had none
    expect(byFingerprint.get("f-sink")?.silencedBy).toEqual([]);
  });

  it.each<[string, string, string[]]>([
    ["fingerprint (the Alertmanager sink's generatorURL)", "?fingerprint=p-sol-low", ["p-sol-low"]],
    ["pair", "?pair=ETH/USD", ["f-eth-critical"]],
    ["pairs as a comma list", "?pair=ETH/USD,SOL/USD", ["f-eth-critical", "p-sol-low"]],
    ["pairs repeated", "?pair=ETH/USD&pair=SOL/USD", ["f-eth-critical", "p-sol-low"]],
    [
      "blank pair = no filter",
      "?pair=",
      ["f-eth-critical", "f-btc-warning-old", "p-sol-low", "f-btc-warning-new", "f-sink"],
    ],
    ["rule kind", "?rule=low_sources", ["p-sol-low"]],
    ["rule id", "?rule=stale_eth", ["f-eth-critical"]],
    ["daemon rule kind", "?rule=sink_error", ["f-sink"]],
    [
      "minimum severity",
      "?severity=warning",
      ["f-eth-critical", "f-btc-warning-old", "p-sol-low", "f-btc-warning-new"],
    ],
    ["critical only", "?severity=critical", ["f-eth-critical"]],
    ["silenced", "?silenced=true", ["f-eth-critical", "p-sol-low"]],
    ["not silenced", "?silenced=false", ["f-btc-warning-old", "f-btc-warning-new", "f-sink"]],
    ["pending only", "?state=pending", ["p-sol-low"]],
    [
      "filters combine",
      "?pair=BTC/USD&rule=price_change&state=firing",
      ["f-btc-warning-old", "f-btc-warning-new"],
    ],
    ["nothing matches", "?pair=DOGE/USD", []],
  ])("filters by %s", async (_name, query, expected) => {
    expect(await fingerprints(query)).toEqual(expected);
  });

  it.each<[string, string, string]>([
    ["an unknown severity", "?severity=urgent", "query.severity"],
    ["silenced not a boolean", "?silenced=yes", "query.silenced"],
    ["a resolved state", "?state=resolved", "query.state"],
    ["an unknown parameter", "?pairs=BTC/USD", "query.pairs"],
    ["too many names", `?pair=${Array.from({ length: 101 }, (_, i) => `P${i}`).join(",")}`, "query.pair"],
  ])("refuses %s with a 400 naming the parameter", async (_name, query, path) => {
    const { status, body } = await api.get(`/alerts${query}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: "invalid_request" });
    expect((body as { message: string }).message.startsWith(`${path}: `)).toBe(true);
  });

  it("requires the token when one is set", async () => {
    api.token = "s3cret";
    try {
      expect((await api.get("/alerts")).status).toBe(401);
      expect((await api.get("/alerts", { authorization: "Bearer s3cret" })).status).toBe(200);
    } finally {
      api.token = "";
    }
  });
});

describe("bySeverityThenAge", () => {
  const alert = (fingerprint: string, over: Partial<ApiAlert> = {}): ApiAlert => ({
    ...payload({ fingerprint }),
    status: "firing",
    state: "firing",
    firesAt: null,
    silencedBy: [],
    inhibitedBy: [],
    ...over,
  });
  const early = "2026-11-22T10:00:00.000Z";
  const late = "2026-11-22T10:05:00.000Z";
  it.each<[string, ApiAlert[], string[]]>([
    [
      "severity before age",
      [
        alert("a", { startsAt: early, severity: "info" }),
        alert("b", { startsAt: late, severity: "critical" }),
      ],
      ["b", "a"],
    ],
    [
      "older first at the same severity",
      [alert("a", { startsAt: late }), alert("b", { startsAt: early })],
      ["b", "a"],
    ],
    [
      "firing before pending at the same severity and start",
      [alert("a", { status: "pending", state: "pending" }), alert("b")],
      ["b", "a"],
    ],
    ["then by fingerprint", [alert("b"), alert("a")], ["a", "b"]],
  ])("%s", (_name, alerts, expected) => {
    expect([...alerts].sort(bySeverityThenAge).map((a) => a.fingerprint)).toEqual(expected);
  });
});
