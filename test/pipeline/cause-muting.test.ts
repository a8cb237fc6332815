// Children of a cause alert through the event hub: not notified on their own while the parent fires, none lost
// when it resolves, and the same decisions after a restart (the hub's memory rebuilt from the journal).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PmError } from "../../src/domain/errors.js";
import { isMutedTransition, type AlertPayload } from "../../src/domain/events.js";
import {
  activeAlerts,
  createMonitorState,
  exportAlertState,
  importAlertState,
  observe,
  tick,
  type MonitorState,
  type Observation,
} from "../../src/domain/monitor.js";
import type { TargetSpec } from "../../src/domain/types.js";
import { createEventHub, type EventHub } from "../../src/pipeline/event-hub.js";
import { parsePersistedAlertState } from "../../src/state/alert-checkpoint.js";
import { createJournal, type Journal } from "../../src/state/journal.js";
import { BTC_OFF, T0, obs, pairPrice, rule } from "../domain/helpers.js";

const TARGETS = ["BTC/USD", "ETH/USD", "SOL/USD", "STRK/USD"].map(
  (pair): Extract<TargetSpec, { kind: "offchain" }> => ({ ...BTC_OFF, id: `offchain:${pair}`, pair }),
);
const error = new PmError("PM_ERR_UPSTREAM_HTTP", "HTTP 500", { retryable: true, details: { status: 500 } });

/** A daemon in miniature: the monitor, the hub over a journal, and what a sink was given to notify. */
class Daemon {
  state: MonitorState = createMonitorState();
  journal: Journal = createJournal(10_000);
  hub: EventHub = createEventHub({ journal: this.journal, nowMs: () => T0, version: "test" });
  /** Every published transition with whether a sink notifies it. */
  readonly published: { alert: AlertPayload; notified: boolean; step: number }[] = [];
  step = 0;
  constructor(
    readonly rules = [rule("upstream_error", {}, { threshold: 2, minFiringMs: 0 }), upstreamDown()],
  ) {}
  feed(target: number, failed: boolean, atMs: number): void {
    const spec = TARGETS[target]!;
    const observation: Observation = failed
      ? { kind: "offchain", target: spec, result: { ok: false, error }, observedAtMs: atMs }
      : obs.off(pairPrice("100", atMs), atMs, spec);
    this.publish(observe(this.state, observation, this.rules, atMs));
  }
  tick(atMs: number): void {
    this.publish(tick(this.state, this.rules, atMs));
  }
  /** Restart: the monitor from its checkpoint, the hub over the journal with the firing alerts restored. */
  restart(): void {
    const checkpoint = parsePersistedAlertState(JSON.parse(JSON.stringify(exportAlertState(this.state))));
    this.state = importAlertState(checkpoint);
    this.journal = createJournal(10_000, this.journal.entries(), this.journal.lastSeq);
    this.hub = createEventHub({ journal: this.journal, nowMs: () => T0, version: "test" });
    this.hub.restoreActive(activeAlerts(this.state));
  }
  private publish({
    state,
    transitions,
  }: {
    state: MonitorState;
    transitions: readonly AlertPayload[];
  }): void {
    this.state = state;
    this.step++;
    for (const transition of transitions) {
      const alert = this.hub.publishAlert(transition).alert;
      this.published.push({ alert, notified: !isMutedTransition(alert), step: this.step });
    }
  }
}

function upstreamDown() {
  return rule("upstream_down", { minFraction: 0.5, windowMs: 5_000 }, { threshold: 2, clearThreshold: 1 });
}

/** The properties over what the hub published. */
function checkNotifications(published: Daemon["published"]): void {
  const parentFiring = new Set<string>();
  /** Open child episodes: fingerprint → whether any of its firing announcements was notified. */
  const open = new Map<string, boolean>();
  for (const [index, { alert, notified }] of published.entries()) {
    if (alert.rule === "upstream_down") {
      if (alert.status === "firing") parentFiring.add(alert.fingerprint);
      else parentFiring.delete(alert.fingerprint);
      continue;
    }
    const wasNotified = open.get(alert.fingerprint);
    if (alert.status === "firing") {
      // no child firing is notified while a parent fires
      if (parentFiring.size > 0) expect({ index, notified }).toEqual({ index, notified: false });
      open.set(alert.fingerprint, (wasNotified ?? false) || notified);
    } else {
      // a resolve is notified exactly when the firing was
      expect({ index, notified }).toEqual({ index, notified: wasNotified ?? false });
      open.delete(alert.fingerprint);
    }
  }
  // after the parent resolved, nothing still firing was left unannounced
  if (parentFiring.size === 0)
    for (const [fingerprint, notified] of open)
      expect({ fingerprint, notified }).toEqual({ fingerprint, notified: true });
}

describe("children of a cause through the hub", () => {
  it("an outage and its recovery: one parent notified, its children only in the journal", () => {
    const daemon = new Daemon();
    for (let t = 0; t < 4; t++) daemon.feed(t, false, T0);
    for (let s = 1; s <= 3; s++) for (let t = 0; t < 4; t++) daemon.feed(t, true, T0 + s * 1_000);
    for (let t = 0; t < 4; t++) daemon.feed(t, false, T0 + 5_000);
    const notified = daemon.published
      .filter((p) => p.notified)
      .map((p) => `${p.alert.rule}:${p.alert.status}`);
    expect(notified).toEqual(["upstream_down:firing", "upstream_down:resolved"]);
    const children = daemon.published.filter((p) => p.alert.rule === "upstream_error");
    expect(children).toHaveLength(8);
    expect(children.every((p) => p.alert.causedBy === daemon.published[0]?.alert.fingerprint)).toBe(true);
    expect(daemon.hub.wasNotified(children[0]!.alert.fingerprint)).toBe(true); // resolved: no memory left
    checkNotifications(daemon.published);
  });

  it("a child that outlives its parent is announced and then its resolve notified, also across a restart", () => {
    const held = rule("upstream_error", {}, { threshold: 2, minFiringMs: 10_000 });
    const daemon = new Daemon([held, upstreamDown()]);
    for (let t = 0; t < 4; t++) daemon.feed(t, false, T0);
    for (let s = 1; s <= 2; s++) for (let t = 0; t < 4; t++) daemon.feed(t, true, T0 + s * 1_000);
    const child = daemon.published.find((p) => p.alert.rule === "upstream_error")!.alert.fingerprint;
    expect(daemon.hub.wasNotified(child)).toBe(false);
    daemon.restart();
    expect(daemon.hub.wasNotified(child)).toBe(false);
    expect(daemon.hub.activeAlerts().find((a) => a.fingerprint === child)?.causedBy).toBeDefined();
    for (let t = 0; t < 4; t++) daemon.feed(t, false, T0 + 4_000);
    daemon.restart();
    expect(daemon.hub.wasNotified(child)).toBe(true);
    daemon.tick(T0 + 13_000);
    const notified = daemon.published
      .filter((p) => p.notified)
      .map((p) => `${p.alert.rule}:${p.alert.reason}`);
    expect(notified).toEqual([
      "upstream_down:first",
      "upstream_down:resolved",
      ...Array.from({ length: 4 }, () => "upstream_error:repeat"),
      ...Array.from({ length: 4 }, () => "upstream_error:resolved"),
    ]);
    checkNotifications(daemon.published);
  });

  it("no child transition is notified while its parent fires, and none is lost when it resolves (random outages, restarts)", () => {
    const step = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          kind: fc.constant("poll" as const),
          target: fc.integer({ min: 0, max: 3 }),
          failed: fc.boolean(),
        }),
      },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant("tick" as const) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("restart" as const) }) },
    );
    const lifecycle = fc.record({
      minFiringMs: fc.constantFrom(0, 0, 3_000),
      forMs: fc.constantFrom(0, 0, 1_500),
      parentForMs: fc.constantFrom(0, 0, 2_000),
    });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(step, fc.integer({ min: 200, max: 3_000 })), { maxLength: 80 }),
        lifecycle,
        (steps, l) => {
          const daemon = new Daemon([
            rule("upstream_error", {}, { threshold: 2, minFiringMs: l.minFiringMs, forMs: l.forMs }),
            rule(
              "upstream_down",
              { minFraction: 0.5, windowMs: 5_000 },
              { threshold: 2, clearThreshold: 1, forMs: l.parentForMs },
            ),
          ]);
          let nowMs = T0;
          for (const [s, gapMs] of steps) {
            nowMs += gapMs;
            if (s.kind === "poll") daemon.feed(s.target, s.failed, nowMs);
            else if (s.kind === "tick") daemon.tick(nowMs);
            else daemon.restart();
          }
          // everything recovers and time passes: every episode ends
          for (let i = 0; i < 3; i++) {
            nowMs += 5_000;
            for (let t = 0; t < 4; t++) daemon.feed(t, false, nowMs);
            daemon.tick(nowMs);
          }
          checkNotifications(daemon.published);
          expect(daemon.hub.activeAlerts()).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });
});
