// The operator API of the real daemon on its simulator: a firing and a pending alert, a target with history, the status.
import { afterEach, describe, expect, it } from "vitest";
import { ALERTS_RESPONSE } from "../../src/http/api/alerts.js";
import { HISTORY_RESPONSE } from "../../src/http/api/alerts-history.js";
import { STATUS_RESPONSE } from "../../src/http/api/status-schema.js";
import { TARGETS_RESPONSE } from "../../src/http/api/targets-schema.js";
import { http, startTestApp, type TestApp } from "./harness.js";
import { waitFor } from "../wait-for.js";

const PAIR = "BTC/USD";

let current: TestApp | undefined;
afterEach(async () => {
  await current?.stop();
  current = undefined;
});

/** GET an API path of the daemon, parsed as JSON. */
async function get(t: TestApp, path: string): Promise<{ status: number; body: unknown }> {
  const response = await http("GET", `${t.httpUrl}/api/v1${path}`);
  return { status: response.status, body: JSON.parse(response.text) as unknown };
}

describe("operator API of the real daemon", () => {
  it("lists a firing and a pending alert, a target with its history, the journal and the status", async () => {
    // the simulator's pair has a handful of sources: at most 100 always holds, so both rules fire at once,
    // one announced at once and one held pending by its 10-minute `for`; price_change keeps a history ring
    const t = (current = await startTestApp({
      monitors: { offchain: [{ pair: PAIR, periodMs: 200 }] },
      rules: [
        { kind: "low_sources", id: "low_now", market: "offchain", threshold: 100, forMs: 0 },
        { kind: "low_sources", id: "low_later", market: "offchain", threshold: 100, forMs: 600_000 },
        { kind: "price_change", market: "offchain", windowMs: 60_000, threshold: 0.5 },
      ],
    }));
    await t.waitForAlert((e) => e.alert.labels["rule_id"] === "low_now", 5_000, "low_now firing");

    const alerts = await get(t, "/alerts");
    expect(alerts.status).toBe(200);
    const listed = ALERTS_RESPONSE.parse(alerts.body).alerts;
    expect(listed.map((a) => [a.labels["rule_id"], a.state, a.labels["pair"]])).toEqual([
      ["low_now", "firing", PAIR],
      ["low_later", "pending", PAIR],
    ]);
    const pending = listed[1];
    expect(Date.parse(pending?.firesAt ?? "") - Date.parse(pending?.startsAt ?? "")).toBe(600_000);
    expect(listed.every((a) => a.silencedBy.length === 0 && a.inhibitedBy.length === 0)).toBe(true);
    const onlyPending = ALERTS_RESPONSE.parse((await get(t, "/alerts?state=pending&rule=low_later")).body);
    expect(onlyPending.alerts.map((a) => a.state)).toEqual(["pending"]);
    // the Alertmanager sink's generatorURL (/api/v1/alerts?fingerprint=…) finds its alert
    const linked = ALERTS_RESPONSE.parse(
      (await get(t, `/alerts?fingerprint=${listed[0]?.fingerprint}`)).body,
    );
    expect(linked.alerts.map((a) => a.labels["rule_id"])).toEqual(["low_now"]);

    await waitFor(
      async () => {
        const { targets } = TARGETS_RESPONSE.parse((await get(t, "/targets")).body);
        expect(targets).toHaveLength(1);
        expect(targets[0]?.history.length).toBeGreaterThanOrEqual(3);
      },
      { timeout: 5_000, interval: 100 },
    );
    const [target] = TARGETS_RESPONSE.parse((await get(t, "/targets?points=2")).body).targets;
    expect(target).toMatchObject({
      kind: "offchain",
      labels: { pair: PAIR, market: "offchain" },
      periodMs: 200,
      lastPoll: { ok: true, error: null },
      latest: { kind: "price", comparable: true },
    });
    expect(target?.history).toHaveLength(2);
    expect(target?.latest?.kind === "price" && Number(target.latest.price)).toBeGreaterThan(0);

    const history = HISTORY_RESPONSE.parse((await get(t, "/alerts/history?type=alert,lifecycle")).body);
    expect(history.events[0]).toMatchObject({ type: "lifecycle", event: "started" });
    expect(history.events.some((e) => e.type === "alert" && e.alert.labels["rule_id"] === "low_now")).toBe(
      true,
    );

    const status = STATUS_RESPONSE.parse((await get(t, "/status")).body);
    expect(status).toMatchObject({
      configGeneration: 0,
      upstream: { simulator: true, url: t.app.upstreamUrl() },
      counts: { targets: 1, firing: 1, pending: 1, silenced: 0, inhibited: 0 },
      cluster: null,
    });
    await t.app.reload(t.config);
    expect(STATUS_RESPONSE.parse((await get(t, "/status")).body).configGeneration).toBe(1);
  });
});
