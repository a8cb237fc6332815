// Webhook sink faults: receiver down, slow, 429 storms, 5xx and a restart mid-outage; the outbox holds and nothing is lost.
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { Registry } from "prom-client";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SinkConfig } from "../../src/config/types.js";
import type { AlertPayload } from "../../src/domain/events.js";
import { createMetrics } from "../../src/metrics.js";
import { createEventHub, type EventHub } from "../../src/pipeline/event-hub.js";
import { createJournal } from "../../src/state/journal.js";
import { createChatOpsSinks, type ChatOpsSinks } from "../../src/sinks/chatops/index.js";
import { SEED, budget, seededRandom } from "./support/mode.js";
import { reportSuite } from "./support/report.js";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.js";
import { pollUntil } from "./support/ws-server.js";

const SECRET = "reliability-webhook-secret";
const TIMEOUT_MS = 300;
const ROUNDS = budget(1, 3);
const PER_PHASE = budget(20, 60);
const WAIT_MS = 30_000;

describe("webhook sink faults", () => {
  const startedAtMs = Date.now();
  const random = seededRandom(SEED + 2);
  const metrics = createMetrics(new Registry(), { collectProcess: false });
  const stateDir = mkdtempSync(join(tmpdir(), "pm-reliability-sinks-"));
  const dispatcher = new Agent({ keepAliveTimeout: 50, keepAliveMaxTimeout: 50 });
  const published = new Set<string>();
  const faults: string[] = [];
  let hub: EventHub;
  let receiver: WebhookReceiver;
  let sink: SinkConfig;
  let chatops: ChatOpsSinks;
  let fingerprints = 0;
  let restarts = 0;
  let maxHeldInOutbox = 0;

  const build = (): ChatOpsSinks =>
    createChatOpsSinks({
      sinks: [sink],
      source: hub,
      stateDir,
      dispatcher,
      metrics,
      logger: pino({ level: "silent" }),
      raise: (alert) => hub.publishAlert(alert),
      nowMs: Date.now,
      random,
      policy: { baseDelayMs: 50, maxDelayMs: 400 },
    });

  beforeAll(async () => {
    hub = createEventHub({ journal: createJournal(100_000), nowMs: Date.now, version: "0.0.0" });
    receiver = await startWebhookReceiver(SECRET);
    sink = {
      kind: "webhook",
      name: "hook",
      url: receiver.url,
      secret: SECRET,
      enabled: true,
      rules: [],
      pairs: [],
      labels: {},
      minSeverity: "info",
      sendResolved: true,
      ratePerMinute: 0,
      burst: 1,
      timeoutMs: TIMEOUT_MS,
      maxAgeMs: 3_600_000,
      failureThreshold: 3,
      groupBy: ["..."],
      groupWaitMs: 0,
      groupIntervalMs: 0,
      repeatIntervalMs: 0,
    };
    chatops = build();
    await chatops.start();
  });

  afterAll(async () => {
    await chatops?.stop(0);
    await receiver?.close();
    await dispatcher.close();
  });

  /** Publish `count` transitions: a firing and, half the time, its resolve. */
  const publish = (count: number): void => {
    let n = 0;
    while (n < count) {
      const fingerprint = `fp${String(fingerprints++).padStart(14, "0")}`;
      const firing: AlertPayload = {
        fingerprint,
        status: "firing",
        rule: "price_change",
        severity: "critical",
        labels: { pair: "BTC/USD", market: "offchain", window: fingerprint },
        summary: `transition ${fingerprint}`,
        value: 0.05,
        threshold: 0.02,
        startsAt: new Date().toISOString(),
        endsAt: null,
        reason: "first",
        context: {},
      };
      const events = [hub.publishAlert(firing)];
      if (n + 1 < count && random() < 0.5)
        events.push(
          hub.publishAlert({
            ...firing,
            status: "resolved",
            reason: "resolved",
            endsAt: new Date().toISOString(),
          }),
        );
      for (const event of events) published.add(`${event.seq}:${event.alert.status}`);
      n += events.length;
    }
  };
  const pending = (): number => chatops.status()[0]?.pending ?? 0;
  const deliveredAll = (): boolean => {
    const keys = receiver.uniqueKeys();
    return pending() === 0 && [...published].every((key) => keys.has(key));
  };
  const waitDelivered = (what: string): Promise<void> =>
    pollUntil(deliveredAll, `${what}: every transition delivered`, WAIT_MS);
  const sinkErrors = (status: string): number =>
    hub
      .replay(0)
      .events.filter((e) => e.type === "alert" && e.alert.rule === "sink_error" && e.alert.status === status)
      .length;
  const outboxLines = (): number => {
    const file = join(stateDir, "outbox", "hook.jsonl");
    if (!existsSync(file)) return 0;
    const live = new Set<string>();
    // the daemon may be appending: the text after the last newline is a line not yet whole (read on the next poll)
    for (const line of readFileSync(file, "utf8").split("\n").slice(0, -1)) {
      if (line === "") continue;
      const record = JSON.parse(line) as { id?: string; ack?: string };
      if (record.ack !== undefined) live.delete(record.ack);
      else if (record.id !== undefined) live.add(record.id);
    }
    return live.size;
  };

  it("delivers everything when the receiver is healthy", async () => {
    publish(PER_PHASE);
    await waitDelivered("baseline");
  });

  for (let round = 0; round < ROUNDS; round++) {
    it(`round ${round + 1}: holds the outbox while the receiver refuses connections, then delivers`, async () => {
      const errorsBefore = sinkErrors("firing");
      await receiver.down();
      faults.push("receiver down");
      publish(PER_PHASE);
      // the sink notices (sink_error) and keeps every message on disk meanwhile
      await pollUntil(() => sinkErrors("firing") > errorsBefore, "sink_error to fire", WAIT_MS);
      await pollUntil(() => outboxLines() >= PER_PHASE, "the outbox file to hold the messages", WAIT_MS);
      maxHeldInOutbox = Math.max(maxHeldInOutbox, outboxLines());
      expect(pending()).toBeGreaterThanOrEqual(PER_PHASE);
      await receiver.up();
      await waitDelivered("after the outage");
      await pollUntil(
        () => sinkErrors("resolved") === sinkErrors("firing"),
        "sink_error to resolve",
        WAIT_MS,
      );
    });

    it(`round ${round + 1}: retries deliveries that time out on a slow receiver`, async () => {
      const slowBefore = receiver.counts.slow;
      receiver.setMode({ kind: "slow", delayMs: TIMEOUT_MS * 2 });
      faults.push("receiver slower than the sink timeout");
      publish(PER_PHASE);
      await receiver.changed.until(
        () => receiver.counts.slow >= slowBefore + 3,
        "timed-out attempts",
        WAIT_MS,
      );
      receiver.setMode({ kind: "ok" });
      await waitDelivered("after the slow receiver");
    });

    it(`round ${round + 1}: honours Retry-After in a 429 storm`, async () => {
      const refusedBefore = receiver.refusedAtMs.length;
      receiver.setMode({ kind: "rate_limited", retryAfterS: 1 });
      faults.push("429 storm with Retry-After: 1");
      publish(PER_PHASE);
      await receiver.changed.until(
        () => receiver.refusedAtMs.length >= refusedBefore + 3,
        "three 429s",
        WAIT_MS,
      );
      receiver.setMode({ kind: "ok" });
      const storm = receiver.refusedAtMs.slice(refusedBefore, refusedBefore + 3);
      for (let i = 1; i < storm.length; i++) expect(storm[i]! - storm[i - 1]!).toBeGreaterThanOrEqual(950);
      await waitDelivered("after the 429 storm");
    });

    it(`round ${round + 1}: retries 5xx answers`, async () => {
      const refusedBefore = receiver.counts.refused;
      receiver.setMode({ kind: "error" });
      faults.push("receiver answering 500");
      publish(PER_PHASE);
      await receiver.changed.until(() => receiver.counts.refused >= refusedBefore + 3, "three 500s", WAIT_MS);
      receiver.setMode({ kind: "ok" });
      await waitDelivered("after the 5xx burst");
    });

    it(`round ${round + 1}: keeps the outbox across a restart during an outage`, async () => {
      await receiver.down();
      faults.push("restart during an outage");
      publish(PER_PHASE);
      await pollUntil(() => outboxLines() >= PER_PHASE, "the outbox file to hold the messages", WAIT_MS);
      await chatops.stop(0);
      const held = outboxLines();
      expect(held).toBeGreaterThanOrEqual(PER_PHASE);
      chatops = build();
      await chatops.start();
      restarts += 1;
      expect(pending()).toBe(held);
      await receiver.up();
      await waitDelivered("after the restart");
    });
  }

  it("delivered every transition, duplicates only as same-id retries, and left an empty outbox", async () => {
    await chatops.stop(2_000);
    const keys = receiver.uniqueKeys();
    const lost = [...published].filter((key) => !keys.has(key));
    const unexpected = [...keys].filter((key) => !published.has(key));
    expect(lost).toEqual([]);
    expect(unexpected).toEqual([]);
    // every duplicate is a retry of the same delivery (same X-Pragma-Delivery), never a second message
    expect(receiver.uniqueDeliveries()).toBe(keys.size);
    expect(receiver.counts.badSignature).toBe(0);
    expect(outboxLines()).toBe(0);
    expect(existsSync(join(stateDir, "outbox", "hook.dead.jsonl"))).toBe(false);
    const outcomes = new Map<string, number>();
    for (const v of (await metrics.sinkDeliveries.get()).values)
      outcomes.set(String(v.labels.outcome), (outcomes.get(String(v.labels.outcome)) ?? 0) + v.value);
    for (const outcome of ["ok", "network", "timeout", "rate_limited", "http_error"])
      expect(outcomes.get(outcome) ?? 0, outcome).toBeGreaterThan(0);
    const report = reportSuite(
      "sink-faults",
      "generic webhook sink against a failing receiver",
      startedAtMs,
      {
        "faults injected": faults.length,
        "sink restarts during an outage": restarts,
        "transitions published": published.size,
        "most messages held in the outbox file": maxHeldInOutbox,
        "delivery attempts failed (network)": outcomes.get("network") ?? 0,
        "delivery attempts failed (timeout)": outcomes.get("timeout") ?? 0,
        "delivery attempts failed (429)": outcomes.get("rate_limited") ?? 0,
        "delivery attempts failed (5xx)": outcomes.get("http_error") ?? 0,
        "requests accepted by the receiver": receiver.counts.accepted,
        "transitions received (raw, with retries)": receiver.raw.length,
        "transitions received (deduped by seq + status)": keys.size,
        "sink_error fired": sinkErrors("firing"),
        "sink_error resolved": sinkErrors("resolved"),
        lost: lost.length,
      },
    );
    expect(report.counts["lost"]).toBe(0);
  });
});
