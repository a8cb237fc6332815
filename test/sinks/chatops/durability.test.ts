// Outbox durability and sink health end to end: restart, drain, dead letters, corrupt files, sink_error, re-sends.
import { mkdir, mkdtemp, readFile, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fingerprintOf } from "../../../src/domain/fingerprint.js";
import { startHarness, type Harness } from "./harness.js";
import { makeAlert, metricValue, nthAlert, resolvedOf, sinkOf } from "./helpers.js";
import { waitFor } from "../../wait-for.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const h0 = "http://127.0.0.1:1";
const seqs = (): number[] => h!.rx.requests.map((r) => (JSON.parse(r.body) as { seq: number }).seq);
const waitForRequests = (n: number) => waitFor(() => expect(h!.rx.requests).toHaveLength(n));

describe("chat-ops durability", () => {
  it("redelivers what was pending after a restart, and never an acknowledged message", async () => {
    const sinks = (url: string) => [sinkOf("webhook", `${url}/hook`)];
    h = await startHarness(sinks);
    h.rx.replies.push({ status: 200 }, "hang");
    for (let i = 1; i <= 3; i++) h.publish(nthAlert(i));
    await waitForRequests(2); // 1 acknowledged, 2 in flight
    await h.chatops.stop(0); // deadline now: the in-flight request is abandoned, 2 and 3 stay on disk
    expect(h.chatops.status()[0]!.pending).toBe(2);

    await h.restart(sinks(h.rx.url));
    await waitForRequests(4);
    await waitFor(() => expect(h!.chatops.status()[0]!.pending).toBe(0));
    expect(seqs()).toEqual([1, 2, 2, 3]); // 2 was never answered, so it is sent again; 1 never is
    const delivery = (i: number) => h!.rx.requests[i]!.headers["x-pragma-delivery"];
    expect(delivery(2)).toBe(delivery(1)); // same id across the restart: receivers can dedupe
    await h.chatops.stop(0);
    await h.restart(sinks(h.rx.url));
    await h.clock.advance(60_000);
    expect(h.rx.requests).toHaveLength(4);
  });

  it("drains the outbox on stop before the deadline", async () => {
    h = await startHarness((url) => [sinkOf("slack", `${url}/s`)]);
    for (let i = 1; i <= 3; i++) h.publish(nthAlert(i));
    await h.chatops.stop(5_000);
    expect(h.rx.requests).toHaveLength(3);
    expect(h.chatops.status()[0]!.pending).toBe(0);
    expect(await readFile(join(h.stateDir, "outbox", "slack.jsonl"), "utf8")).not.toContain('"payload"');
  });

  it("moves a message older than maxAgeMs to the dead-letter file", async () => {
    const sink = sinkOf("slack", `${h0}/s`, { maxAgeMs: 10_000, failureThreshold: 100, timeoutMs: 600_000 });
    h = await startHarness((url) => [{ ...sink, url: `${url}/s` }]);
    h.rx.fallback = { status: 502 };
    h.publish(makeAlert());
    await waitForRequests(1);
    const startMs = h.clock.nowMs();
    while (h.chatops.status()[0]!.pending > 0 && h.clock.nowMs() - startMs < 20_000) {
      await h.waitForAttempts(h.rx.requests.length);
      await h.clock.advance(1_000);
      await new Promise((resolve) => setTimeout(resolve, 5)); // let a retry, if any, reach the receiver
    }
    expect(h.clock.nowMs() - startMs).toBeGreaterThanOrEqual(10_000);
    expect(h.chatops.status()[0]!.pending).toBe(0);
    const dead = await readFile(join(h.stateDir, "outbox", "slack.dead.jsonl"), "utf8");
    expect(JSON.parse(dead.trim())).toMatchObject({ reason: "max_age", payload: { seq: 1 } });
    expect(await metricValue(h.metrics.sinkDeadLetters, { sink: "slack" })).toBe(1);
    const attempts = h.rx.requests.length;
    await h.clock.advance(120_000);
    expect(h.rx.requests).toHaveLength(attempts);
  });

  it("dead-letters a message the service rejects (400) at once", async () => {
    h = await startHarness((url) => [sinkOf("slack", `${url}/s`)]);
    h.rx.replies.push({ status: 400, body: "invalid_blocks" });
    h.publish(nthAlert(1));
    h.publish(nthAlert(2));
    await waitForRequests(1);
    await waitFor(() => expect(h!.chatops.status()[0]!.pending).toBe(1));
    await h.clock.advance(750); // a rejection still backs off: the endpoint may be misconfigured
    await waitForRequests(2);
    await waitFor(() => expect(h!.chatops.status()[0]!.pending).toBe(0));
    expect(await metricValue(h.metrics.sinkDeliveries, { sink: "slack", outcome: "rejected" })).toBe(1);
    expect(await metricValue(h.metrics.sinkDeadLetters, { sink: "slack" })).toBe(1);
  });

  it.each([401, 403, 404, 410])(
    "treats %i as a configuration error: sink_error at once, messages kept, delivered once fixed",
    async (status) => {
      h = await startHarness((url) => [sinkOf("webhook", `${url}/hook`, { failureThreshold: 5 })]);
      h.rx.fallback = { status, body: "invalid token" };
      for (let i = 1; i <= 4; i++) h.publish(nthAlert(i));
      await h.waitForAttempts(1);
      // Raised on the first refusal, not after failureThreshold (5) of them; nothing is dead-lettered.
      await waitFor(() => expect(h!.raised).toHaveLength(1));
      expect(h.raised[0]).toMatchObject({
        rule: "sink_error",
        status: "firing",
        context: { lastStatus: status },
      });
      expect(h.raised[0]!.summary).toContain("check the sink's config");
      expect(h.chatops.status()[0]).toMatchObject({ pending: 4, failing: true });
      expect(await metricValue(h.metrics.sinkDeadLetters, { sink: "webhook" })).toBe(0);
      expect(await metricValue(h.metrics.sinkDeliveries, { sink: "webhook", outcome: "misconfigured" })).toBe(
        1,
      );
      // A long backoff (1 min, equal jitter at random 0.5 → 45 s), not the 1 s of a transient error.
      await h.clock.advance(44_999);
      expect(h.rx.requests).toHaveLength(1);
      h.rx.fallback = { status: 200 }; // the operator fixes the secret
      await h.clock.advance(1);
      await waitForRequests(5);
      await waitFor(() => expect(h!.chatops.status()[0]).toMatchObject({ pending: 0, failing: false }));
      expect(seqs()).toEqual([1, 1, 2, 3, 4]);
      expect(h.raised.map((a) => a.status)).toEqual(["firing", "resolved"]);
    },
  );

  it("keeps retrying a configuration error until maxAgeMs, then dead-letters as max_age", async () => {
    h = await startHarness((url) => [sinkOf("slack", `${url}/s`, { maxAgeMs: 600_000 })]);
    h.rx.fallback = { status: 403, body: "invalid_token" };
    h.publish(makeAlert());
    await h.waitForAttempts(1);
    for (let i = 0; i < 20 && h.chatops.status()[0]!.pending > 0; i++) {
      await h.clock.advance(60_000);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(h.chatops.status()[0]!.pending).toBe(0);
    const attempts = h.rx.requests.length;
    // Retried for the whole 10 min, never faster than the 45 s floor (the harness caps backoff at 1 min).
    expect(attempts).toBeGreaterThan(2);
    expect(attempts).toBeLessThanOrEqual(1 + Math.floor(600_000 / 45_000));
    const dead = await readFile(join(h.stateDir, "outbox", "slack.dead.jsonl"), "utf8");
    expect(JSON.parse(dead.trim())).toMatchObject({ reason: "max_age", payload: { seq: 1 } });
  });

  it("moves a corrupt outbox aside and starts clean", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "pm-chatops-"));
    await mkdir(join(stateDir, "outbox"));
    await writeFile(join(stateDir, "outbox", "webhook.jsonl"), "\u0000\u0001 not json\n{}\n");
    h = await startHarness((url) => [sinkOf("webhook", `${url}/hook`)], { stateDir });
    expect(
      (await readdir(join(stateDir, "outbox"))).some((f) =>
        /^webhook\.jsonl\.corrupt-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/.test(f),
      ),
    ).toBe(true);
    expect(h.chatops.status()[0]!.pending).toBe(0);
    h.publish(makeAlert());
    await waitForRequests(1);
  });

  it("raises sink_error after failureThreshold failures, elsewhere only, and resolves it on recovery", async () => {
    h = await startHarness((url) => [
      sinkOf("slack", `${url}/bad`, { name: "bad", failureThreshold: 3 }),
      sinkOf("webhook", `${url}/good`, { name: "good" }),
    ]);
    let badDown = true;
    h.rx.route = (request) => (request.url === "/bad" && badDown ? { status: 500 } : undefined);
    h.publish(makeAlert());
    await waitFor(() => expect(h!.rx.requests.filter((r) => r.url === "/bad")).toHaveLength(1));
    for (let i = 0; i < 6 && h.raised.length === 0; i++) {
      await h.waitForAttempts(h.rx.requests.filter((r) => r.url === "/bad").length, "bad");
      await h.clock.advance(10_000);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // the third failure's sink_error is raised asynchronously: on a busy machine after the loop's last look
    await waitFor(() =>
      expect(h!.raised[0]).toMatchObject({
        rule: "sink_error",
        status: "firing",
        labels: { sink: "bad", endpoint: "slack" },
      }),
    );
    expect(h.chatops.status().find((s) => s.name === "bad")!.failing).toBe(true);
    badDown = false;
    await waitFor(async () => {
      await h!.clock.advance(10_000);
      expect(h!.raised).toHaveLength(2);
    });
    expect(h.raised[1]).toMatchObject({ status: "resolved", fingerprint: h.raised[0]!.fingerprint });
    expect(h.raised[0]!.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    await h.chatops.stop(5_000);
    const bad = h.rx.requests.filter((r) => r.url === "/bad").map((r) => r.body);
    const good = h.rx.requests
      .filter((r) => r.url === "/good")
      .map((r) => JSON.parse(r.body) as { alert: { rule: string } });
    expect(bad.some((b) => b.includes("sink_error"))).toBe(false);
    expect(good.filter((e) => e.alert.rule === "sink_error")).toHaveLength(2);
  });

  it("resolves its own sink_error restored from before a restart on the first successful delivery", async () => {
    const restored = makeAlert({
      rule: "sink_error",
      severity: "critical",
      labels: { sink: "hook", endpoint: "webhook" },
      fingerprint: fingerprintOf("sink_error", { sink: "hook", endpoint: "webhook" }),
    });
    h = await startHarness((url) => [sinkOf("webhook", `${url}/hook`, { name: "hook" })], {
      active: [restored],
    });
    expect(h.chatops.status()[0]!.failing).toBe(true);
    h.publish(makeAlert());
    await waitForRequests(1);
    await waitFor(() => expect(h!.raised).toHaveLength(1));
    expect(h.raised[0]).toMatchObject({
      rule: "sink_error",
      status: "resolved",
      fingerprint: restored.fingerprint,
    });
    expect(h.chatops.status()[0]!.failing).toBe(false);
  });

  it("re-sends firing alerts to Alertmanager every resend interval, endsAt 4 intervals ahead", async () => {
    const active = [nthAlert(1), nthAlert(2)];
    h = await startHarness((url) => [sinkOf("alertmanager", `${url}/am`)], { active });
    await waitForRequests(1); // alerts firing before the (re)start are refreshed at once
    const first = JSON.parse(h.rx.requests[0]!.body) as { endsAt: string }[];
    expect(first).toHaveLength(2);
    expect(Date.parse(first[0]!.endsAt)).toBe(h.clock.nowMs() + 240_000);
    await h.waitForAttempts(1);
    await h.clock.advance(59_999);
    expect(h.rx.requests).toHaveLength(1);
    await h.clock.advance(1);
    await waitForRequests(2);
  });

  it("re-sends Alertmanager only the firing alerts it was told of, not one silenced from its start", async () => {
    const active = [nthAlert(1), { ...nthAlert(2), silencedBy: ["s-1"] }];
    h = await startHarness((url) => [sinkOf("alertmanager", `${url}/am`)], { active });
    await waitForRequests(1);
    const refreshed = JSON.parse(h.rx.requests[0]!.body) as { labels: Record<string, string> }[];
    expect(refreshed).toHaveLength(1);
    expect(refreshed[0]!.labels).toMatchObject(JSON.parse(JSON.stringify(nthAlert(1).labels)) as object);
  });

  it("stops re-sending an alert to Alertmanager once it resolved, even with sendResolved off", async () => {
    const active = [nthAlert(1)];
    h = await startHarness((url) => [sinkOf("alertmanager", `${url}/am`, { sendResolved: false })], {
      active,
    });
    await waitForRequests(1);
    h.publish(resolvedOf(nthAlert(1)));
    await h.waitForAttempts(1);
    await h.clock.advance(300_000);
    expect(h.rx.requests).toHaveLength(1);
  });
});
