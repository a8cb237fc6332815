// Recovering sink_error alerts still firing at the end of the journal.
import { describe, expect, it } from "vitest";
import type { AlertPayload, JournaledEvent } from "../../src/domain/events.js";
import { firingAlertsOfRule, firingSinkErrors } from "../../src/state/sink-errors.js";

const alert = (
  fingerprint: string,
  rule: AlertPayload["rule"],
  status: AlertPayload["status"],
): AlertPayload => ({
  fingerprint,
  status,
  rule,
  severity: "critical",
  labels: {},
  summary: "",
  value: null,
  threshold: null,
  startsAt: "2026-11-22T10:00:00.000Z",
  endsAt: null,
  reason: status === "firing" ? "first" : "resolved",
  context: {},
});

describe("firingSinkErrors", () => {
  it("keeps only sink_error fingerprints whose last event is firing", () => {
    const events: JournaledEvent[] = [
      { type: "alert", seq: 1, alert: alert("a", "sink_error", "firing") },
      { type: "alert", seq: 2, alert: alert("b", "sink_error", "firing") },
      { type: "alert", seq: 3, alert: alert("c", "price_change", "firing") },
      { type: "alert", seq: 4, alert: alert("a", "sink_error", "resolved") },
      { type: "lifecycle", seq: 5, event: "stopping", at: "2026-11-22T10:00:00.000Z", version: "0" },
    ];
    expect(firingSinkErrors(events).map((a) => a.fingerprint)).toEqual(["b"]);
  });
});

describe("firingAlertsOfRule", () => {
  it("finds a monitor_stalled the previous run left firing (the app resolves it at start)", () => {
    const events: JournaledEvent[] = [
      { type: "alert", seq: 1, alert: alert("s", "monitor_stalled", "firing") },
      { type: "alert", seq: 2, alert: alert("b", "sink_error", "firing") },
    ];
    expect(firingAlertsOfRule(events, "monitor_stalled").map((a) => a.fingerprint)).toEqual(["s"]);
    const resolved: JournaledEvent = {
      type: "alert",
      seq: 3,
      alert: alert("s", "monitor_stalled", "resolved"),
    };
    expect(firingAlertsOfRule([...events, resolved], "monitor_stalled")).toEqual([]);
  });
});
