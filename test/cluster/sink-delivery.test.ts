// Cluster notifications, pure parts: consumer names, what a message is for a sink, settling an attempt, the shared bucket.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  deadLetterStream,
  messageStep,
  parseRateState,
  settle,
  sinkConsumerName,
  takeToken,
} from "../../src/cluster/sink-delivery.js";
import { CHATOPS_DEFAULT_POLICY } from "../../src/sinks/chatops/index.js";
import { makeAlert, makeEvent, resolvedOf, sinkOf } from "../sinks/chatops/helpers.js";

const sink = sinkOf("webhook", "http://127.0.0.1:1/hook", { maxAgeMs: 60_000 });
const facts = { ageMs: 1_000, maxAgeMs: 60_000, consecutiveFailures: 1, jitter: 0.5 };

describe("sink names on JetStream", () => {
  it("are readable for plain names and never shared by two sink names", () => {
    expect(sinkConsumerName("hook")).toBe("pm_sink_hook");
    expect(deadLetterStream("hook")).toEqual({ stream: "pm_dead_hook", subject: "pm.dead.hook" });
    expect(deadLetterStream("a.b").subject.split(".")).toHaveLength(3);
    const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,20}$/);
    fc.assert(
      fc.property(name, name, (a, b) => {
        expect(sinkConsumerName(a)).toMatch(/^[A-Za-z0-9_-]+$/);
        if (a !== b) expect(sinkConsumerName(a)).not.toBe(sinkConsumerName(b));
      }),
    );
  });
});

describe("messageStep", () => {
  it("skips lifecycle events, malformed ones and alerts the sink does not route", () => {
    const lifecycle = {
      type: "lifecycle",
      seq: 3,
      event: "started",
      at: "2026-01-01T00:00:00.000Z",
      version: "t",
    };
    expect(messageStep(lifecycle as never, sink, 0)).toEqual({ kind: "skip", muted: false });
    expect(messageStep(undefined, sink, 0)).toEqual({ kind: "skip", muted: false });
    const other = sinkOf("webhook", "http://127.0.0.1:1/hook", { rules: ["stale_price"] });
    expect(messageStep(makeEvent(4), other, 0)).toEqual({ kind: "skip", muted: false });
    const noResolves = sinkOf("webhook", "http://127.0.0.1:1/hook", { sendResolved: false });
    expect(messageStep(makeEvent(5, resolvedOf(makeAlert())), noResolves, 0).kind).toBe("skip");
  });

  it("skips a muted transition as muted, dead-letters one past maxAgeMs, delivers the rest", () => {
    const silenced = makeEvent(6, makeAlert({ silencedBy: ["s1"] }));
    expect(messageStep(silenced, sink, 0)).toEqual({ kind: "skip", muted: true });
    const event = makeEvent(7);
    expect(messageStep(event, sink, 60_000)).toEqual({ kind: "dead_letter", event });
    expect(messageStep(event, sink, 59_999)).toEqual({ kind: "deliver", event });
  });
});

describe("settle", () => {
  it("acks an accepted delivery, dead-letters a rejected one, redelivers an aborted one at once", () => {
    expect(settle({ kind: "ok", status: 200 }, facts, CHATOPS_DEFAULT_POLICY)).toEqual({ kind: "ack" });
    expect(settle({ kind: "rejected", status: 400 }, facts, CHATOPS_DEFAULT_POLICY)).toEqual({
      kind: "dead_letter",
      reason: "rejected",
    });
    expect(settle({ kind: "aborted" }, facts, CHATOPS_DEFAULT_POLICY)).toEqual({ kind: "nak", delayMs: 0 });
  });

  it("redelivers after the receiver's Retry-After, else after the backoff", () => {
    const limited = { kind: "retry", outcome: "http_error", status: 503, retryAfterMs: 2_000 } as const;
    expect(settle(limited, facts, CHATOPS_DEFAULT_POLICY)).toEqual({ kind: "nak", delayMs: 2_000 });
    const failed = settle({ kind: "retry", outcome: "timeout" }, facts, CHATOPS_DEFAULT_POLICY);
    expect(failed.kind).toBe("nak");
    if (failed.kind === "nak") expect(failed.delayMs).toBeGreaterThan(0);
    const misconfigured = settle({ kind: "misconfigured", status: 401 }, facts, CHATOPS_DEFAULT_POLICY);
    expect(misconfigured).toEqual({ kind: "nak", delayMs: expect.any(Number) as number });
    if (misconfigured.kind === "nak") expect(misconfigured.delayMs).toBeGreaterThanOrEqual(30_000);
  });

  it("never waits past maxAgeMs, and dead-letters a message that reached it", () => {
    const limited = { kind: "retry", outcome: "rate_limited", status: 429, retryAfterMs: 600_000 } as const;
    expect(settle(limited, { ...facts, ageMs: 50_000 }, CHATOPS_DEFAULT_POLICY)).toEqual({
      kind: "nak",
      delayMs: 10_000,
    });
    expect(settle(limited, { ...facts, ageMs: 60_000 }, CHATOPS_DEFAULT_POLICY)).toEqual({
      kind: "dead_letter",
      reason: "max_age",
    });
  });
});

describe("takeToken", () => {
  const limit = { ratePerMinute: 60, burst: 2 };

  it("starts full, runs dry after the burst and says how long until the next token", () => {
    const first = takeToken(undefined, 0, limit);
    expect(first.waitMs).toBe(0);
    const second = takeToken(first.state, 0, limit);
    expect(second.waitMs).toBe(0);
    const third = takeToken(second.state, 250, limit);
    expect(third.waitMs).toBe(750);
    expect(takeToken(third.state, 1_000, limit).waitMs).toBe(0);
  });

  it("never holds more than the burst, and an unlimited sink always has a token", () => {
    const idle = takeToken({ tokens: 0, atMs: 0 }, 3_600_000, limit);
    expect(idle.state.tokens).toBe(1);
    expect(takeToken({ tokens: 0, atMs: 0 }, 0, { ratePerMinute: 0, burst: 1 }).waitMs).toBe(0);
  });

  it("reads back what it stores, and a malformed record as a full bucket", () => {
    const { state } = takeToken(undefined, 5, limit);
    expect(parseRateState(JSON.stringify(state))).toEqual(state);
    expect(parseRateState("{")).toBeUndefined();
    expect(parseRateState('{"tokens":"x"}')).toBeUndefined();
    expect(parseRateState(undefined)).toBeUndefined();
  });
});
