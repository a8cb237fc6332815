// Sinks over real loopback HTTP: payload shapes per service, filters, retries, Retry-After, timeouts, digests.
/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- asserting on received JSON bodies and `expect.any` matchers */
import { createHmac, timingSafeEqual } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SinkConfig } from "../../../src/config/types.js";
import { USER_AGENT, userAgentOf } from "../../../src/version.js";
import { startHarness, type Harness } from "./harness.js";
import { makeAlert, metricValue, nthAlert, resolvedOf, sinkOf } from "./helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const body = (i: number): Record<string, unknown> =>
  JSON.parse(h!.rx.requests[i]!.body) as Record<string, unknown>;
const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);
const waitForRequests = (n: number) => vi.waitFor(() => expect(h!.rx.requests).toHaveLength(n));

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
    await vi.waitFor(() => expect(h!.rx.requests.length).toBeGreaterThanOrEqual(5));
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
    await vi.waitFor(() => expect(h!.chatops.status()[0]!.pending).toBe(0));
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
    await vi.waitFor(async () =>
      expect(await metricValue(h!.metrics.sinkDeliveries, { sink: "slack", outcome: "timeout" })).toBe(1),
    );
    await h.clock.advance(750);
    await waitForRequests(2);
    await vi.waitFor(() => expect(h!.chatops.status()[0]!.pending).toBe(0));
  });

  it("coalesces a burst over the rate limit into one digest", async () => {
    h = await startHarness((url) => [sinkOf("slack", `${url}/s`, { ratePerMinute: 60, burst: 1 })]);
    for (let i = 0; i < 10; i++) h.publish(nthAlert(i));
    await waitForRequests(1);
    expect((body(0).text as string).startsWith("🔴 FIRING [critical] T0/USD")).toBe(true);
    await h.waitForAttempts(1);
    await h.clock.advance(1_000);
    await waitForRequests(2);
    expect(body(1).text).toMatch(/^9 alerts firing: T1\/USD price_change, T2\/USD/);
    await vi.waitFor(() => expect(h!.chatops.status()[0]!.pending).toBe(0));
    await h.clock.advance(60_000);
    expect(h.rx.requests).toHaveLength(2);
    expect(await metricValue(h.metrics.sinkDigests, { sink: "slack" })).toBe(1);
  });

  it("re-sends a failed digest as the same message: same delivery id, same events, every seq listed", async () => {
    const sinks = (url: string): SinkConfig[] => [
      sinkOf("webhook", `${url}/hook`, { ratePerMinute: 60, burst: 1, failureThreshold: 100 }),
    ];
    h = await startHarness(sinks);
    for (let i = 1; i <= 14; i++) h.publish(nthAlert(i));
    await waitForRequests(1); // seq 1 alone, then the other 13 wait for tokens
    h.rx.fallback = { status: 503 };
    await h.waitForAttempts(1);
    await h.clock.advance(1_000);
    await waitForRequests(2);
    const id = h.rx.requests[1]!.headers["x-pragma-delivery"];
    expect(id).toMatch(/^digest-[0-9a-f]{16}$/);
    expect(body(1)).toMatchObject({ type: "digest", count: 13, seqs: range(2, 14) });
    await h.waitForAttempts(2);
    for (let i = 15; i <= 18; i++) h.publish(nthAlert(i)); // the backlog grows while the digest is retried
    await h.clock.advance(1_000);
    await waitForRequests(3);
    expect(h.rx.requests[2]!.headers["x-pragma-delivery"]).toBe(id);
    expect(body(2).seqs).toEqual(range(2, 14));
    // A restart re-sends the same digest too: its membership is in the outbox, not in memory.
    await h.waitForAttempts(3);
    await h.chatops.stop(0);
    h.rx.fallback = { status: 200 };
    await h.restart(sinks(h.rx.url));
    for (let i = 0; i < 10 && h.chatops.status()[0]!.pending > 0; i++) {
      await h.clock.advance(2_000);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await vi.waitFor(() => expect(h!.chatops.status()[0]!.pending).toBe(0));
    expect(h.rx.requests[3]!.headers["x-pragma-delivery"]).toBe(id);
    expect((body(3).events as { seq: number }[]).map((e) => e.seq)).toEqual(range(2, 14));
    // The events that arrived meanwhile go in later messages, under other ids.
    const later = h.rx.requests.slice(4).map((r) => JSON.parse(r.body) as { seq?: number; seqs?: number[] });
    expect(later.flatMap((b) => b.seqs ?? [b.seq])).toEqual(range(15, 18));
    expect(h.rx.requests.slice(4).map((r) => r.headers["x-pragma-delivery"])).not.toContain(id);
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
    await vi.waitFor(() => expect(h!.rx.requests.filter((r) => r.url === "/ok")).toHaveLength(3));
    expect(h.rx.requests.filter((r) => r.url === "/stuck")).toHaveLength(1);
    expect(h.chatops.status().map((s) => [s.name, s.pending])).toEqual([
      ["stuck", 3],
      ["ok", 0],
    ]);
  });

  it("never digests PagerDuty events: they are paced one by one", async () => {
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
