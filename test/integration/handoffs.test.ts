// Hand-offs on the real daemon: external labels on every event, Alertmanager's Watchdog and links, heartbeat pings.
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { AlertEvent } from "../../src/domain/events.js";
import { fingerprintOf } from "../../src/domain/fingerprint.js";
import { WATCHDOG_FINGERPRINT } from "../../src/pipeline/watchdog-alert.js";
import { USER_AGENT } from "../../src/version.js";
import { startReceiver, type ReceivedRequest, type Receiver } from "../sinks/chatops/helpers.js";
import { buildConfig, makeTempDir, startTestApp, type TestApp } from "./harness.js";
import { waitFor } from "../wait-for.js";

interface PostedAlert {
  readonly labels: Record<string, string>;
  readonly endsAt: string;
  readonly generatorURL?: string;
}

let t: TestApp | undefined;
let rx: Receiver | undefined;
afterEach(async () => {
  await t?.stop();
  await rx?.close();
  t = undefined;
  rx = undefined;
});

const PAIR = "STRK/USD";
const at = (path: string): ReceivedRequest[] => rx!.requests.filter((r) => r.url === path);
const posted = (): PostedAlert[] =>
  at("/am/api/v2/alerts").flatMap((r) => JSON.parse(r.body) as PostedAlert[]);

describe("hand-offs to other systems (real daemon, real HTTP)", () => {
  it("stamps external labels everywhere, keeps Watchdog firing in Alertmanager only, links back, pings the heartbeat", async () => {
    rx = await startReceiver();
    const url = rx.url;
    t = await startTestApp({
      monitors: { offchain: [{ pair: PAIR, periodMs: 100 }] },
      rules: [{ kind: "upstream_error", id: "api_down", threshold: 3 }],
      alerts: { externalLabels: { env: "test", region: "eu" }, watchdog: { enabled: true } },
      sinks: [
        { kind: "alertmanager", url: `${url}/am`, resendIntervalMs: 1_000 },
        { kind: "webhook", url: `${url}/hook`, secret: "0123456789abcdef", minSeverity: "info" },
        { kind: "heartbeat", url: `${url}/ping`, intervalMs: 1_000 },
      ],
    });

    // The watchdog fires once the daemon is ready and reaches Alertmanager, named by its convention.
    const watchdog = await t.waitForAlert((e) => e.alert.rule === "watchdog", 10_000, "watchdog firing");
    expect(watchdog.alert).toMatchObject({ status: "firing", labels: { env: "test", region: "eu" } });
    await waitFor(() => expect(posted().some((a) => a.labels.alertname === "Watchdog")).toBe(true), {
      timeout: 5_000,
    });
    const wd = posted().find((a) => a.labels.alertname === "Watchdog")!;
    expect(wd.labels).toEqual({
      alertname: "Watchdog",
      rule: "watchdog",
      severity: "info",
      env: "test",
      region: "eu",
    });
    expect(wd.generatorURL).toBe(`${t.httpUrl}/api/v1/alerts?fingerprint=${WATCHDOG_FINGERPRINT}`);

    // An alert from the engine carries the external labels on the bus (journal, WebSocket, log, sinks)...
    await t.injectFault({ kind: "outage", status: 503, endpoint: "pair_price", pair: PAIR, retryAfterS: 0 });
    const fired = await t.waitForAlert((e) => e.alert.rule === "upstream_error", 10_000, "upstream_error");
    expect(fired.alert.labels).toMatchObject({ env: "test", region: "eu", rule_id: "api_down" });
    // ...but not in its fingerprint: the condition is the same whoever runs the daemon.
    const { env: _env, region: _region, ...own } = fired.alert.labels;
    expect(fired.alert.fingerprint).toBe(fingerprintOf("upstream_error", own));
    expect(t.alertEvents().find((e) => e.seq === fired.seq)?.alert.labels.env).toBe("test");
    const log = await t.logs.waitFor(
      (l) => l["event"] === "alert" && l["seq"] === fired.seq,
      5_000,
      "alert log",
    );
    expect((log["alert"] as AlertEvent["alert"]).labels.region).toBe("eu");
    await waitFor(
      () =>
        expect(
          posted().some((a) => a.labels.alertname === "api_down" && a.labels.rule === "upstream_error"),
        ).toBe(true),
      { timeout: 5_000 },
    );
    await waitFor(() => expect(at("/hook").some((r) => r.body.includes('"upstream_error"'))).toBe(true), {
      timeout: 5_000,
    });

    // The watchdog is re-sent every resendIntervalMs, never to the webhook, and every request says who we are.
    await waitFor(
      () =>
        expect(
          at("/am/api/v2/alerts").filter((r) => r.body.includes('"Watchdog"')).length,
        ).toBeGreaterThanOrEqual(3),
      { timeout: 10_000 },
    );
    expect(at("/hook").some((r) => r.body.includes('"watchdog"'))).toBe(false);
    expect(at("/ping").length).toBeGreaterThanOrEqual(2);
    expect(at("/ping").every((r) => r.method === "GET")).toBe(true);
    for (const r of rx.requests) expect(r.headers["user-agent"]).toBe(USER_AGENT);

    // A clean stop sends no resolve for the watchdog: Alertmanager's dead-man's switch sees it stop arriving.
    await t.stop();
    const watchdogs = posted().filter((a) => a.labels.alertname === "Watchdog");
    for (const a of watchdogs) expect(Date.parse(a.endsAt)).toBeGreaterThan(Date.now());
    expect(
      t
        .alertEvents()
        .filter((e) => e.alert.rule === "watchdog")
        .map((e) => e.alert.status),
    ).toEqual(["firing"]);
  }, 40_000);

  it("applies a reload: new external labels on what is published next, a disabled watchdog resolves", async () => {
    const layer = {
      monitors: { offchain: [{ pair: PAIR, periodMs: 100 }] },
      rules: [{ kind: "upstream_error", threshold: 3 }],
      alerts: { externalLabels: { env: "blue" }, watchdog: { enabled: true } },
    };
    t = await startTestApp(layer);
    const fired = await t.waitForAlert((e) => e.alert.rule === "watchdog", 10_000, "watchdog firing");
    expect(fired.alert.labels).toEqual({ env: "blue" });
    const dir = makeTempDir();
    try {
      await t.app.reload(
        buildConfig(
          { ...layer, alerts: { externalLabels: { env: "green" }, watchdog: { enabled: false } } },
          dir,
        ),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const resolved = await t.waitForAlert(
      (e) => e.alert.rule === "watchdog" && e.alert.status === "resolved",
      5_000,
      "watchdog resolved",
    );
    expect(resolved.alert.fingerprint).toBe(fired.alert.fingerprint);
    expect(resolved.alert.context).toMatchObject({ stoppedBecause: "disabled" });
    await t.injectFault({ kind: "outage", status: 503, endpoint: "pair_price", pair: PAIR, retryAfterS: 0 });
    const next = await t.waitForAlert((e) => e.alert.rule === "upstream_error", 10_000, "upstream_error");
    expect(next.alert.labels.env).toBe("green");
  }, 30_000);
});
