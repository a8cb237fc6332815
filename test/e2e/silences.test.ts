// End-to-end: silences on the built daemon — a silenced alert reaches the journal but not the webhook, ending the
// silence notifies it, a pair silenced throughout is never notified (nor its resolve), and silences survive kill -9.
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AlertPayload } from "../../src/domain/events.js";
import { ensureBuilt, killAllDaemons, startDaemon, type LogLine, type RunningDaemon } from "./daemon.js";
import { makeWorkDir, removeWorkDirs, testConfig, writeConfig } from "./fixtures.js";
import { accepted, startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";

const SECRET = "e2e-webhook-secret-0123456789";
/** The 10 s price_change window needs that much polled history before a spike can fire it. */
const WINDOW_HISTORY_MS = 10_500;
const ALERT_TIMEOUT_MS = 8_000;

const receivers: WebhookReceiver[] = [];

beforeAll(() => ensureBuilt(), 120_000);

afterEach(async () => {
  await killAllDaemons();
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  removeWorkDirs();
});

/** Call the daemon's API as a person with curl would: JSON in, JSON out. */
async function api(
  daemon: RunningDaemon,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ readonly status: number; readonly body: unknown }> {
  const response = await fetch(`${daemon.httpUrl}/api/v1${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

/** A silence of one pair for the next hour, created through the API; its id. */
async function silencePair(daemon: RunningDaemon, pair: string): Promise<string> {
  const nowMs = Date.now();
  const { status, body } = await api(daemon, "POST", "/silences", {
    matchers: [{ name: "pair", value: pair, isRegex: false, isEqual: true }],
    startsAt: new Date(nowMs).toISOString(),
    endsAt: new Date(nowMs + 3_600_000).toISOString(),
    createdBy: "e2e",
    comment: `maintenance of ${pair}`,
  });
  expect(status).toBe(200);
  return (body as { silenceID: string }).silenceID;
}

/** Spike `pairs` ×1.06 in the embedded simulator for `durationMs`. */
async function spike(daemon: RunningDaemon, pairs: readonly string[], durationMs: number): Promise<void> {
  for (const pair of pairs) {
    const response = await fetch(`${daemon.simulatorUrl}/_sim/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "spike", pair, factor: 1.06, durationMs }),
    });
    expect(response.status).toBe(201);
  }
}

/** The alert of a stdout log line (the log sink writes every transition the hub publishes). */
const alertOf = (line: LogLine): AlertPayload | undefined =>
  line["event"] === "alert" ? (line["alert"] as AlertPayload) : undefined;
const logged =
  (pair: string, status: "firing" | "resolved") =>
  (line: LogLine): boolean =>
    alertOf(line)?.labels["pair"] === pair && alertOf(line)?.status === status;

describe("silences (spawned daemon, webhook sink)", () => {
  it("keeps silenced alerts from the sink, notifies when the silence ends, and never sends a silenced resolve", async () => {
    const work = makeWorkDir();
    const hook = await startWebhookReceiver(SECRET, 200);
    receivers.push(hook);
    writeConfig(
      work,
      testConfig(work, { extraPairs: ["ETH/USD", "SOL/USD"], webhook: { url: hook.url, secret: SECRET } }),
    );
    const daemon = await startDaemon(work.configFile, { cwd: work.dir });
    const btcSilence = await silencePair(daemon, "BTC/USD");
    await silencePair(daemon, "SOL/USD");
    await delay(WINDOW_HISTORY_MS);

    await spike(daemon, ["BTC/USD", "ETH/USD", "SOL/USD"], 60_000);
    // ETH/USD is not silenced: it is notified, which also shows the sink delivers
    const eth = await hook.deliveries.waitFor((d) => d.event?.alert.labels["pair"] === "ETH/USD", {
      timeoutMs: ALERT_TIMEOUT_MS,
      what: "ETH/USD firing at the webhook",
    });
    expect(eth.event?.alert.silencedBy).toBeUndefined();
    const btc = alertOf(
      await daemon.logs.waitFor(logged("BTC/USD", "firing"), {
        timeoutMs: ALERT_TIMEOUT_MS,
        what: "BTC/USD firing",
      }),
    );
    expect(btc?.silencedBy).toEqual([btcSilence]);
    const sol = alertOf(
      await daemon.logs.waitFor(logged("SOL/USD", "firing"), {
        timeoutMs: ALERT_TIMEOUT_MS,
        what: "SOL/USD firing",
      }),
    );
    expect(sol?.silencedBy).toHaveLength(1);
    // the sink delivers in journal order: once a later transition is delivered, the silenced ones were skipped
    await delay(1_000);
    expect(accepted(hook.deliveries.items, btc!.fingerprint, "firing")).toEqual([]);

    // ending the BTC silence while the alert fires notifies it then
    const sinceExpiry = hook.deliveries.mark();
    expect(await api(daemon, "DELETE", `/silences/${btcSilence}`)).toEqual({ status: 200, body: {} });
    const unmuted = await hook.deliveries.waitFor(
      (d) => d.event?.alert.fingerprint === btc!.fingerprint && d.event.alert.status === "firing",
      { from: sinceExpiry, timeoutMs: 3_000, what: "BTC/USD firing after its silence expired" },
    );
    expect(unmuted.event?.alert).toMatchObject({ reason: "repeat" });
    expect(unmuted.event?.alert.silencedBy).toBeUndefined();

    // both resolve once the window has moved past the step: BTC's was notified, SOL's never fired anywhere
    await hook.deliveries.waitFor(
      (d) => d.event?.alert.fingerprint === btc!.fingerprint && d.event.alert.status === "resolved",
      { timeoutMs: 20_000, what: "BTC/USD resolved at the webhook" },
    );
    const solResolved = alertOf(
      await daemon.logs.waitFor(logged("SOL/USD", "resolved"), {
        timeoutMs: 20_000,
        what: "SOL/USD resolved",
      }),
    );
    expect(solResolved?.silencedBy).toHaveLength(1);
    await hook.deliveries.waitFor(
      (d) => d.event?.alert.labels["pair"] === "ETH/USD" && d.event.alert.status === "resolved",
      { timeoutMs: 20_000, what: "ETH/USD resolved at the webhook" },
    );
    await delay(1_000);
    expect(hook.deliveries.items.filter((d) => d.event?.alert.labels["pair"] === "SOL/USD")).toEqual([]);
  }, 90_000);

  it("keeps silences across kill -9, with their state, and lists the expired ones", async () => {
    const work = makeWorkDir();
    writeConfig(work, testConfig(work));
    const first = await startDaemon(work.configFile, { cwd: work.dir });
    const kept = await silencePair(first, "BTC/USD");
    const ended = await silencePair(first, "ETH/USD");
    expect((await api(first, "DELETE", `/silences/${ended}`)).status).toBe(200);
    first.signal("SIGKILL");
    await first.waitExit(5_000);

    const second = await startDaemon(work.configFile, { cwd: work.dir });
    const { status, body } = await api(second, "GET", "/silences");
    expect(status).toBe(200);
    const listed = body as { id: string; status: { state: string }; comment: string }[];
    expect(listed.map((s) => [s.id, s.status.state])).toEqual([
      [kept, "active"],
      [ended, "expired"],
    ]);
    expect(await api(second, "GET", `/silences/${kept}`)).toMatchObject({
      status: 200,
      body: { id: kept, createdBy: "e2e", comment: "maintenance of BTC/USD" },
    });
  }, 40_000);
});
