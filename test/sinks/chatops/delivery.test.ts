// Sinks over real loopback HTTP: payload shapes per service, filters, retries, Retry-After, timeouts, grouping.
/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- asserting on received JSON bodies and `expect.any` matchers */
import { createHmac, timingSafeEqual } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { SinkConfig } from "../../../src/config/types.js";
import { USER_AGENT, userAgentOf } from "../../../src/version.js";
import { startHarness, type Harness } from "./harness.js";
import { makeAlert, metricValue, nthAlert, resolvedOf, sinkOf } from "./helpers.js";
import { waitFor } from "../../wait-for.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const body = (i: number): Record<string, unknown> =>
  JSON.parse(h!.rx.requests[i]!.body) as Record<string, unknown>;
const waitForRequests = (n: number) => waitFor(() => expect(h!.rx.requests).toHaveLength(n));

describe("chat-ops delivery", () => {
  it("posts each service's documented payload to its endpoint, and never logs secrets", async () => {
    h = await startHarness((url) => [
      sinkOf("slack", `${url}/slack/T000/B000/SECRET-SLACK`),
      sinkOf("discord", `${url}/discord/SECRET-DISCORD`),
      sinkOf("telegram", url),
      sinkOf("pagerduty", `${url}/v2/enqueue`),
      sinkOf("alertmanager", `${url}/am`),
      sinkOf("webhook", `${url}/hook`),
    ]);
    // Every sink fails once (so each logs a warning, which must not leak a secret), then delivers.
    h.rx.replies.push(...Array.from({ length: 6 }, () => ({ status: 500 })));
    h.publish(makeAlert());
    await waitForRequests(6);
    await h.waitForAttempts(6);
    await h.clock.advance(750);
    await waitForRequests(12);
    const byPath = new Map(h.rx.requests.map((r) => [r.url, r]));
    expect([...byPath.keys()].sort()).toEqual(
      [
        "/am/api/v2/alerts",
        "/bot123456:SECRET-BOT-TOKEN/sendMessage",
        "/discord/SECRET-DISCORD",
        "/hook",
        "/slack/T000/B000/SECRET-SLACK",
        "/v2/enqueue",
      ].sort(),
    );
    for (const r of h.rx.requests) {
      expect(r.method).toBe("POST");
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.headers["user-agent"]).toBe(USER_AGENT); // Discord asks for one; every service gets it
    }
    const json = (path: string): any => JSON.parse(byPath.get(path)!.body); // eslint-disable-line @typescript-eslint/no-explicit-any -- reading received JSON
    expect(json("/slack/T000/B000/SECRET-SLACK")).toMatchObject({
      text: expect.any(String),
      blocks: expect.any(Array),
    });
    expect(json("/discord/SECRET-DISCORD").embeds[0]).toMatchObject({
      title: expect.any(String),
      color: 0xe01e5a,
    });
    expect(json("/bot123456:SECRET-BOT-TOKEN/sendMessage")).toMatchObject({
      chat_id: "-10042",
      parse_mode: "HTML",
    });
    expect(json("/v2/enqueue")).toMatchObject({
      routing_key: "SECRET-ROUTING-KEY-0123456789abcdef",
      event_action: "trigger",
      dedup_key: makeAlert().fingerprint,
      payload: { source: "pragma-monitor", severity: "critical" },
    });
    expect(json("/am/api/v2/alerts")[0].labels).toMatchObject({
      alertname: "price_change",
      severity: "critical",
    });
    expect(json("/hook")).toEqual({ type: "alert", seq: 1, alert: makeAlert() });
    await h.chatops.stop(1_000);
    expect(h.log.text()).not.toMatch(/SECRET|whsec/);
    expect(h.log.text()).toContain("127.0.0.1");
  });

  it("signs the generic webhook so the documented check verifies it", async () => {
    h = await startHarness((url) => [sinkOf("webhook", `${url}/hook`)]);
    h.publish(makeAlert());
    await waitForRequests(1);
    const r = h.rx.requests[0]!;
    const timestamp = String(r.headers["x-pragma-timestamp"]);
    expect(Number(timestamp)).toBe(Math.floor(h.clock.nowMs() / 1000));
    const expected =
      "sha256=" + createHmac("sha256", "whsec-SECRET").update(`${timestamp}.${r.body}`).digest("hex");
    const got = String(r.headers["x-signature-256"]);
    expect(got.length === expected.length && timingSafeEqual(Buffer.from(got), Buffer.from(expected))).toBe(
      true,
    );
    expect(r.headers["x-pragma-delivery"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("applies filters and sendResolved per sink", async () => {
    const sinks = (url: string): SinkConfig[] => [
      sinkOf("webhook", `${url}/eth`, { name: "eth", pairs: ["ETH/USD"] }),
      sinkOf("webhook", `${url}/noresolve`, { name: "noresolve", sendResolved: false }),
      sinkOf("webhook", `${url}/crit`, {
        name: "crit",
        minSeverity: "critical",
        labels: { market: "offchain" },
      }),
    ];
    h = await startHarness(sinks);
    h.publish(makeAlert());
    h.publish(makeAlert({ severity: "warning", fingerprint: "w", labels: { pair: "ETH/USD" } }));
    h.publish(resolvedOf(makeAlert()));
    await waitFor(() => expect(h!.rx.requests.length).toBeGreaterThanOrEqual(5));
    await h.chatops.stop(1_000);
    const seqsAt = (path: string) =>
      h!.rx.requests.filter((r) => r.url === path).map((r) => (JSON.parse(r.body) as { seq: number }).seq);
    expect(seqsAt("/eth")).toEqual([2]);
    expect(seqsAt("/noresolve")).toEqual([1, 2]);
    expect(seqsAt("/crit")).toEqual([1, 3]);
  });

  it("retries a 500 with backoff and keeps the delivery id", async () => {
    h = await startHarness((url) => [sinkOf("webhook", `${url}/hook`)]);
    h.rx.replies.push({ status: 500 });
    h.publish(makeAlert());
    await h.waitForAttempts(1);
    expect(h.chatops.status()[0]).toMatchObject({ pending: 1, failing: false });
    await h.clock.advance(749); // first backoff: 1000 ms with equal jitter at random 0.5 → 750 ms
    expect(h.rx.requests).toHaveLength(1);
    await h.clock.advance(1);
    await waitForRequests(2);
    await waitFor(() => expect(h!.chatops.status()[0]!.pending).toBe(0));
    expect(h.rx.requests[1]!.headers["x-pragma-delivery"]).toBe(
      h.rx.requests[0]!.headers["x-pragma-delivery"],
    );
    expect(await metricValue(h.metrics.sinkDeliveries, { sink: "webhook", outcome: "http_error" })).toBe(1);
    expect(await metricValue(h.metrics.sinkDeliveries, { sink: "webhook", outcome: "ok" })).toBe(1);
  });

  it("honours Retry-After on 429", async () => {
    h = await startHarness((url) => [sinkOf("discord", `${url}/d`)]);
    h.rx.replies.push({ status: 429, headers: { "retry-after": "10" }, body: "{}" });
    h.publish(makeAlert());
    await h.waitForAttempts(1);
    await h.clock.advance(9_999);
    expect(h.rx.requests).toHaveLength(1);
    await h.clock.advance(1);
    await waitForRequests(2);
    expect(await metricValue(h.metrics.sinkDeliveries, { sink: "discord", outcome: "rate_limited" })).toBe(1);
  });

  it("times out a request that never answers and retries it", async () => {
    h = await startHarness((url) => [sinkOf("slack", `${url}/s`, { timeoutMs: 2_000 })]);
    h.rx.replies.push("hang");
    h.publish(makeAlert());
    await waitForRequests(1);
    await h.clock.advance(2_000);
    await waitFor(async () =>
      expect(await metricValue(h!.metrics.sinkDeliveries, { sink: "slack", outcome: "timeout" })).toBe(1),
    );
    await h.clock.advance(750);
    await waitForRequests(2);
    await waitFor(() => expect(h!.chatops.status()[0]!.pending).toBe(0));
  });

  it("groups a burst into one notification after groupWaitMs, and what changed into one per groupIntervalMs", async () => {
    const grouped = { groupBy: [], groupWaitMs: 5_000, groupIntervalMs: 30_000, repeatIntervalMs: 0 };
    h = await startHarness((url) => [
      sinkOf("slack", `${url}/s`, { ratePerMinute: 60, burst: 1, ...grouped }),
    ]);
    for (let i = 0; i < 10; i++) h.publish(nthAlert(i));
    await h.waitForDurable("slack", 10);
    await h.clock.advance(4_999);
    expect(h.rx.requests).toHaveLength(0);
    await h.clock.advance(1);
    await waitForRequests(1);
    expect(body(0).text).toBe("🔴 FIRING 10 alerts: 10 new");
    await waitFor(() => expect(h!.chatops.status()[0]!.pending).toBe(0));
    expect(h.chatops.status()[0]!.groups).toBe(1); // what /api/v1/status reports per sink
    for (let i = 0; i < 4; i++) h.publish(resolvedOf(nthAlert(i)));
    h.publish(nthAlert(10));
    await h.waitForDurable("slack", 15);
    await h.clock.advance(29_999);
    expect(h.rx.requests).toHaveLength(1);
    await h.clock.advance(1);
    await waitForRequests(2);
    expect(body(1).text).toBe("🔴 FIRING 11 alerts: 1 new, 6 still firing, 4 resolved");
    await waitFor(() => expect(h!.chatops.status()[0]!.pending).toBe(0));
    await h.clock.advance(120_000);
    expect(h.rx.requests).toHaveLength(2);
    expect(await metricValue(h.metrics.sinkGroupNotifications, { sink: "slack" })).toBe(2);
  });

  it("re-sends a failed group notification as the same message, and after a restart neither re-announces nor loses a resolve", async () => {
    const grouped = { groupBy: [], groupWaitMs: 1_000, groupIntervalMs: 10_000, repeatIntervalMs: 0 };
    const sinks = (url: string): SinkConfig[] => [
      sinkOf("webhook", `${url}/hook`, { failureThreshold: 100, ...grouped }),
    ];
    h = await startHarness(sinks);
    for (let i = 1; i <= 3; i++) h.publish(nthAlert(i));
    await h.waitForDurable("webhook", 3);
    h.rx.fallback = { status: 503 };
    await h.clock.advance(1_000);
    await waitForRequests(1);
    const id = h.rx.requests[0]!.headers["x-pragma-delivery"];
    expect(id).toMatch(/^group-[0-9a-f]{16}$/);
    expect(body(0)).toMatchObject({
      type: "group",
      groupKey: "{}",
      status: "firing",
      count: 3,
      seqs: [1, 2, 3],
    });
    await h.waitForAttempts(1);
    h.publish(nthAlert(4)); // arrives while the notification is retried: it goes in the next one
    await h.waitForDurable("webhook", 4);
    await h.clock.advance(1_000);
    await waitForRequests(2);
    expect(h.rx.requests[1]!.headers["x-pragma-delivery"]).toBe(id);
    expect(body(1).seqs).toEqual([1, 2, 3]);
    await h.waitForAttempts(2);
    // A restart re-sends the same notification too: its membership is in the outbox, not in memory.
    await h.chatops.stop(0);
    h.rx.fallback = { status: 200 };
    await h.restart(sinks(h.rx.url));
    await h.clock.advance(2_000);
    await waitForRequests(3);
    expect(h.rx.requests[2]!.headers["x-pragma-delivery"]).toBe(id);
    expect(body(2).seqs).toEqual([1, 2, 3]);
    await waitFor(() => expect(h!.chatops.status()[0]!.pending).toBe(1));
    // What the group announced survived the restart: 1-3 are "still firing", not new again.
    await h.chatops.stop(0);
    await h.restart(sinks(h.rx.url));
    h.publish(resolvedOf(nthAlert(2)));
    await h.waitForDurable("webhook", 5);
    await h.clock.advance(10_000);
    await waitForRequests(4);
    const states = (body(3).alerts as { state: string; seq: number }[]).map((a) => [a.seq, a.state]);
    expect(states).toEqual([
      [4, "new"],
      [1, "firing"],
      [3, "firing"],
      [5, "resolved"],
    ]);
    expect(body(3).seqs).toEqual([4, 5]);
  });

  it("identifies itself with pragma-monitor/<version> and, when known, the project URL", () => {
    expect(USER_AGENT).toMatch(/^pragma-monitor\/\d+\.\d+\.\d+/);
    expect(userAgentOf("1.2.3", "https://example.org/pm")).toBe(
      "pragma-monitor/1.2.3 (+https://example.org/pm)",
    );
    expect(userAgentOf("1.2.3", undefined)).toBe("pragma-monitor/1.2.3");
  });

  it("keeps delivering to healthy sinks while another one hangs", async () => {
    h = await startHarness((url) => [
      sinkOf("slack", `${url}/stuck`, { name: "stuck" }),
      sinkOf("webhook", `${url}/ok`, { name: "ok" }),
    ]);
    h.rx.route = (request) => (request.url === "/stuck" ? "hang" : undefined);
    for (let i = 1; i <= 3; i++) h.publish(nthAlert(i));
    await waitFor(() => expect(h!.rx.requests.filter((r) => r.url === "/ok")).toHaveLength(3));
    expect(h.rx.requests.filter((r) => r.url === "/stuck")).toHaveLength(1);
    expect(h.chatops.status().map((s) => [s.name, s.pending])).toEqual([
      ["stuck", 3],
      ["ok", 0],
    ]);
  });

  it("grouping off: PagerDuty events are paced one by one, keyed by fingerprint", async () => {
    h = await startHarness((url) => [
      sinkOf("pagerduty", `${url}/v2/enqueue`, { ratePerMinute: 60, burst: 1 }),
    ]);
    for (let i = 0; i < 3; i++) h.publish(nthAlert(i));
    await h.waitForAttempts(1);
    await h.clock.advance(1_000);
    await h.waitForAttempts(2);
    await h.clock.advance(1_000);
    await waitForRequests(3);
    expect([0, 1, 2].map((i) => body(i).dedup_key)).toEqual([0, 1, 2].map((i) => nthAlert(i).fingerprint));
  });
});
