// The cluster journal's pure parts, and the hub in cluster mode: events forwarded to the log, served as delivered.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eventOfMessage, isFromOrigin, messageId, startSeq } from "../../src/cluster/journal-log.js";
import type { JournaledEvent } from "../../src/domain/events.js";
import { createEventHub } from "../../src/pipeline/event-hub.js";
import { createJournal, type UnnumberedEvent } from "../../src/state/journal.js";
import { nthAlert, resolvedOf } from "../sinks/chatops/helpers.js";

const started: UnnumberedEvent = {
  type: "lifecycle",
  event: "started",
  at: "2026-01-01T00:00:00.000Z",
  version: "t",
};

describe("messageId", () => {
  it("is the same for a retry and different for every other publish of one process", () => {
    const alert = nthAlert(1);
    const first = messageId("m1/ab", 1, { type: "alert", alert });
    expect(messageId("m1/ab", 1, { type: "alert", alert })).toBe(first);
    expect(messageId("m1/ab", 2, { type: "alert", alert })).not.toBe(first);
    expect(messageId("m1/cd", 1, { type: "alert", alert })).not.toBe(first);
    expect(first).toContain(alert.fingerprint);
    expect(messageId("m1/ab", 3, started)).toBe("m1/ab:3:lifecycle:started");
  });

  it("tells this process's messages from another's, even one whose origin starts alike", () => {
    expect(isFromOrigin(messageId("m1/ab", 7, started), "m1/ab")).toBe(true);
    expect(isFromOrigin(messageId("m1/abc", 7, started), "m1/ab")).toBe(false);
    expect(isFromOrigin(undefined, "m1/ab")).toBe(false);
  });
});

describe("startSeq", () => {
  it("reads the last `capacity` events the stream holds, never before its first, never below 1", () => {
    expect(startSeq({ firstSeq: 0, lastSeq: 0 }, 10)).toBe(1);
    expect(startSeq({ firstSeq: 1, lastSeq: 4 }, 10)).toBe(1);
    expect(startSeq({ firstSeq: 1, lastSeq: 100 }, 10)).toBe(91);
    expect(startSeq({ firstSeq: 95, lastSeq: 100 }, 10)).toBe(95);
    fc.assert(
      fc.property(
        fc.nat(1_000),
        fc.nat(1_000),
        fc.integer({ min: 1, max: 100 }),
        (first, extra, capacity) => {
          const from = startSeq({ firstSeq: first, lastSeq: first + extra }, capacity);
          expect(from).toBeGreaterThanOrEqual(Math.max(1, first));
          expect(first + extra - from + 1).toBeLessThanOrEqual(capacity);
        },
      ),
    );
  });
});

describe("eventOfMessage", () => {
  it("numbers a well-formed event with the stream seq, and refuses what is not one", () => {
    expect(eventOfMessage(JSON.stringify(started), 42)).toEqual({ ...started, seq: 42 });
    expect(eventOfMessage(JSON.stringify({ ...started, seq: 7 }), 42)?.seq).toBe(42);
    expect(eventOfMessage("not json", 1)).toBeUndefined();
    expect(eventOfMessage("[1]", 1)).toBeUndefined();
    expect(eventOfMessage(JSON.stringify({ type: "alert" }), 1)).toBeUndefined();
  });
});

describe("the hub in cluster mode", () => {
  it("forwards what it publishes instead of journaling it, and serves, replays and tracks what is delivered", () => {
    const forwarded: UnnumberedEvent[] = [];
    const emitted: number[] = [];
    const hub = createEventHub({
      journal: createJournal(10),
      nowMs: () => 0,
      version: "t",
      forward: (event) => forwarded.push(event),
    });
    hub.events$.subscribe((event) => {
      if (event.type !== "price") emitted.push(event.seq);
    });
    const alert = nthAlert(1);
    hub.publishAlert(alert);
    hub.publishLifecycle("started");
    expect(forwarded.map((e) => e.type)).toEqual(["alert", "lifecycle"]);
    expect(emitted).toEqual([]);
    expect(hub.lastSeq()).toBe(0);
    expect(hub.activeAlerts()).toEqual([]);

    // the log numbers them (another member's event in between, and an earlier part the stream no longer holds)
    const other: JournaledEvent = { type: "alert", seq: 6, alert: nthAlert(2) };
    hub.deliver({ ...(forwarded[0] as UnnumberedEvent), seq: 5 });
    hub.deliver(other);
    hub.deliver({ ...(forwarded[1] as UnnumberedEvent), seq: 7 });
    expect(emitted).toEqual([5, 6, 7]);
    expect(hub.lastSeq()).toBe(7);
    expect(hub.replay(5).events.map((e) => e.seq)).toEqual([6, 7]);
    expect(hub.replay(0).gap).toEqual({ from: 1, to: 4 });
    expect(hub.activeAlerts().map((a) => a.fingerprint)).toEqual([
      alert.fingerprint,
      other.alert.fingerprint,
    ]);
    hub.deliver({ type: "alert", seq: 8, alert: resolvedOf(alert) });
    expect(hub.activeAlerts().map((a) => a.fingerprint)).toEqual([other.alert.fingerprint]);
    expect(() => hub.deliver({ type: "alert", seq: 8, alert })).toThrow(RangeError);
  });
});
