// The watchdog alert's decisions: fire when enabled and ready, resolve when not ready or disabled, nothing else.
import { describe, expect, it } from "vitest";
import {
  WATCHDOG_FINGERPRINT,
  createWatchdogAlert,
  watchdogTransition,
} from "../../src/pipeline/watchdog-alert.js";
import type { AlertPayload } from "../../src/domain/events.js";

const nowMs = Date.parse("2026-11-22T10:00:00.000Z");
const firing = watchdogTransition({ enabled: true, ready: true, reasons: [], firing: undefined, nowMs })!;

describe("watchdogTransition", () => {
  it.each([
    ["enabled, ready, not firing → fires", true, true, undefined, "firing"],
    ["enabled, not ready yet → nothing", true, false, undefined, undefined],
    ["disabled → nothing", false, true, undefined, undefined],
    ["enabled, ready, firing → nothing (the sinks keep re-sending it)", true, true, firing, undefined],
    ["firing, daemon no longer ready → resolved", true, false, firing, "resolved"],
    ["firing, disabled by a reload → resolved", false, true, firing, "resolved"],
  ] as const)("%s", (_name, enabled, ready, current, expected) => {
    const next = watchdogTransition({
      enabled,
      ready,
      reasons: ["first poll pending"],
      firing: current,
      nowMs,
    });
    expect(next?.status).toBe(expected);
  });

  it("is an info alert named watchdog with no labels of its own and a fixed fingerprint", () => {
    expect(firing).toMatchObject({
      rule: "watchdog",
      severity: "info",
      labels: {},
      reason: "first",
      endsAt: null,
    });
    expect(firing.fingerprint).toBe(WATCHDOG_FINGERPRINT);
  });
});

describe("createWatchdogAlert", () => {
  it("publishes each transition once and keeps quiet in between", () => {
    const published: AlertPayload[] = [];
    let ready = false;
    const watchdog = createWatchdogAlert({
      enabled: () => true,
      readiness: () => ({ ready, reasons: ready ? [] : ["first poll pending"] }),
      publish: (alert) => published.push(alert),
      nowMs: () => nowMs,
    });
    watchdog.check();
    ready = true;
    watchdog.check();
    watchdog.check();
    ready = false;
    watchdog.check();
    watchdog.check();
    expect(published.map((a) => a.status)).toEqual(["firing", "resolved"]);
    expect(published[1]!.summary).toContain("first poll pending");
  });
});
