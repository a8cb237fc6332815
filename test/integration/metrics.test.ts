// /metrics of the real daemon after polls, rule alerts and a failing sink: promtool-clean, complete, series that never vanish.
import { afterEach, describe, expect, it } from "vitest";
import { RULE_KINDS, SEVERITIES } from "../../src/domain/events.js";
import { HTTP_LIMITS } from "../../src/http/server.js";
import { VERSION } from "../../src/version.js";
import { startWebhookReceiver, type WebhookReceiver } from "../e2e/webhook-receiver.js";
import { http, startTestApp, type TestApp } from "./harness.js";
import { parsePrometheusText, sampleValue, type Sample } from "./prometheus.js";
import { SKIP_WITHOUT_PROMTOOL, promtool } from "./promtool.js";
import { waitFor } from "../wait-for.js";

const SECRET = "metrics-test-secret-0123456789ab";
const BTC = "offchain:BTC/USD:spot:median:1s";

describe("/metrics of the real daemon", () => {
  let t: TestApp | undefined;
  let receiver: WebhookReceiver | undefined;
  afterEach(async () => {
    await t?.stop();
    await receiver?.close();
    t = undefined;
    receiver = undefined;
  });

  /** A daemon with three kinds of targets, a firing rule alert and a webhook sink whose receiver answers 500. */
  const startFailingSink = async (): Promise<{ t: TestApp; receiver: WebhookReceiver }> => {
    receiver = await startWebhookReceiver(SECRET, 500);
    t = await startTestApp({
      monitors: {
        offchain: [{ pair: "BTC/USD", periodMs: 100 }],
        onchain: [{ pair: "BTC/USD", network: "starknet-mainnet", periodMs: 200 }],
        vaults: [{ id: "pragma-btc-vault", periodMs: 200 }],
      },
      rules: [{ kind: "price_level", direction: "above", threshold: 1, severity: "warning" }],
      sinks: [{ kind: "webhook", name: "hook", url: receiver.url, secret: SECRET, failureThreshold: 1 }],
    });
    await t.waitForAlert((e) => e.alert.rule === "sink_error", 5_000, "sink_error");
    return { t, receiver };
  };
  let lastScrapeAtMs = 0;
  /** A fresh render: scrapes within HTTP_LIMITS.metricsCacheMs of the last one share it (README, flood limits). */
  const scrape = async (app: TestApp): Promise<{ text: string; samples: readonly Sample[] }> => {
    const waitMs = lastScrapeAtMs + HTTP_LIMITS.metricsCacheMs + 10 - Date.now();
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    const response = await http("GET", `${app.httpUrl}/metrics`);
    // dated from the answer: the server dates its cached render from when it began, which is no later
    lastScrapeAtMs = Date.now();
    expect(response.status).toBe(200);
    return { text: response.text, samples: parsePrometheusText(response.text) };
  };

  it("counts a sink_error in alerts firing and transitions, and drops it to 0 (not absent) on resolve", async () => {
    const { t, receiver } = await startFailingSink();
    const firing = (samples: readonly Sample[], rule: string, severity: string): number | undefined =>
      sampleValue(samples, "pragma_monitor_alerts_firing", { rule, severity });
    const transitions = (samples: readonly Sample[], status: string, reason: string): number | undefined =>
      sampleValue(samples, "pragma_monitor_alert_transitions_total", { rule: "sink_error", status, reason });

    let { samples } = await scrape(t);
    expect(firing(samples, "sink_error", "critical")).toBe(1);
    expect(firing(samples, "price_level", "warning")).toBe(1);
    expect(transitions(samples, "firing", "first")).toBe(1);
    expect(transitions(samples, "resolved", "resolved")).toBe(0);
    expect(sampleValue(samples, "pragma_monitor_ready")).toBe(0);

    receiver.status = 200;
    await t.waitForAlert(
      (e) => e.alert.rule === "sink_error" && e.alert.status === "resolved",
      10_000,
      "sink_error resolved",
    );
    ({ samples } = await scrape(t));
    expect(firing(samples, "sink_error", "critical")).toBe(0);
    expect(transitions(samples, "resolved", "resolved")).toBe(1);
    // every known rule × severity is a series from the start, firing or not
    for (const rule of RULE_KINDS)
      for (const severity of SEVERITIES)
        expect(firing(samples, rule, severity), `${rule}/${severity}`).toBeDefined();
  });

  it("exports the journal size, build info, last successful poll per target and sink delivery latency", async () => {
    const { t } = await startFailingSink();
    const lastSuccess = (scraped: readonly Sample[]): readonly Sample[] =>
      scraped.filter((s) => s.name === "pragma_monitor_target_last_success_timestamp_seconds");
    // first polls are spread over up to a period: wait until every target has had one
    await waitFor(async () => expect(lastSuccess((await scrape(t)).samples)).toHaveLength(3), {
      timeout: 3_000,
      interval: 50,
    });
    const { samples } = await scrape(t);
    const journaled = t.app.events.replay(0).events.length;
    expect(journaled).toBeGreaterThan(0);
    expect(sampleValue(samples, "pragma_monitor_journal_events")).toBe(journaled);
    expect(sampleValue(samples, "pragma_monitor_build_info", { version: VERSION })).toBe(1);
    const lastSuccessS = sampleValue(samples, "pragma_monitor_target_last_success_timestamp_seconds", {
      target: BTC,
    });
    expect(lastSuccessS).toBeGreaterThan(t.startedAtMs / 1000 - 5);
    expect(lastSuccessS).toBeLessThanOrEqual(Date.now() / 1000);
    expect(
      lastSuccess(samples)
        .map((s) => s.labels["target"])
        .sort(),
    ).toEqual([BTC, "onchain:starknet-mainnet:BTC/USD:median", "vault:pragma-btc-vault"]);
    expect(
      sampleValue(samples, "pragma_monitor_sink_delivery_duration_seconds_count", { sink: "hook" }),
    ).toBeGreaterThan(0);
    // each upstream attempt is one latency observation, in the same scrape as its request count
    const attempts = samples
      .filter(
        (s) => s.name === "pragma_monitor_upstream_requests_total" && s.labels["endpoint"] === "pair_price",
      )
      .reduce((sum, s) => sum + s.value, 0);
    expect(attempts).toBeGreaterThan(0);
    const latency = (suffix: string, labels: Record<string, string> = {}): number | undefined =>
      sampleValue(samples, `pragma_monitor_upstream_request_duration_seconds_${suffix}`, {
        endpoint: "pair_price",
        ...labels,
      });
    expect(latency("count")).toBe(attempts);
    expect(latency("bucket", { le: "+Inf" })).toBe(attempts);
    expect(latency("sum")).toBeGreaterThan(0);
    // label sets known from the config exist at 0 before their first event
    expect(
      sampleValue(samples, "pragma_monitor_sink_deliveries_total", { sink: "hook", outcome: "ok" }),
    ).toBe(0);
    expect(sampleValue(samples, "pragma_monitor_sink_dead_letters_total", { sink: "hook" })).toBe(0);
    expect(sampleValue(samples, "pragma_monitor_polls_total", { endpoint: "vault", outcome: "error" })).toBe(
      0,
    );
    expect(sampleValue(samples, "pragma_monitor_targets", { kind: "funding" })).toBe(0);
    // prom-client's defaults under their stock names
    expect(sampleValue(samples, "nodejs_eventloop_lag_p99_seconds")).toBeDefined();
    expect(samples.filter((s) => s.name.startsWith("pragma_monitor_nodejs_"))).toEqual([]);
  });

  it("drops a removed target's series on reload and shows its kind at 0, not absent", async () => {
    const { t } = await startFailingSink();
    await waitFor(
      async () =>
        expect(
          sampleValue((await scrape(t)).samples, "pragma_monitor_target_last_success_timestamp_seconds", {
            target: "vault:pragma-btc-vault",
          }),
        ).toBeDefined(),
      { timeout: 3_000, interval: 50 },
    );
    await t.app.reload({ ...t.config, monitors: { ...t.config.monitors, vaults: [] } });
    const { samples } = await scrape(t);
    expect(sampleValue(samples, "pragma_monitor_targets", { kind: "vault" })).toBe(0);
    expect(
      sampleValue(samples, "pragma_monitor_target_last_success_timestamp_seconds", {
        target: "vault:pragma-btc-vault",
      }),
    ).toBeUndefined();
    expect(sampleValue(samples, "pragma_monitor_targets", { kind: "offchain" })).toBe(1);
  });

  it.skipIf(SKIP_WITHOUT_PROMTOOL)("passes `promtool check metrics` without a single lint", async () => {
    const { t } = await startFailingSink();
    const { text } = await scrape(t);
    const result = promtool(["check", "metrics"], { input: text });
    expect(result.output).toBe("");
    expect(result.status).toBe(0);
  });
});
