// Pending alerts and inhibition as the operator API reads them from the engine: timelines in, views out.
import { describe, expect, it } from "vitest";
import { alertInhibitors, pendingAlerts, type MonitorState } from "../../src/domain/monitor.js";
import type { AlertPayload } from "../../src/domain/events.js";
import { T0, rule, timeline } from "./helpers.js";

const low = (forMs: number) => rule("low_sources", { market: "offchain" }, { threshold: 3, forMs });
const upstream = rule("upstream_error", {}, { threshold: 2 });

/** What a test compares of the views at `atMs`: each pending alert and the inhibitors of every alert. */
function views(
  state: MonitorState,
  transitions: readonly AlertPayload[],
  atMs: number,
): { pending: unknown[]; inhibited: Record<string, readonly string[]> } {
  const byFingerprint = new Map<string, string>();
  for (const t of transitions) byFingerprint.set(t.fingerprint, t.rule);
  const pending = pendingAlerts(state, T0 + atMs);
  for (const p of pending) byFingerprint.set(p.alert.fingerprint, p.alert.rule);
  const name = (fingerprint: string): string => byFingerprint.get(fingerprint) ?? fingerprint;
  const inhibitors = alertInhibitors(state);
  const inhibited: Record<string, readonly string[]> = {};
  for (const fingerprint of byFingerprint.keys())
    inhibited[name(fingerprint)] = inhibitors(fingerprint).map(name);
  return {
    pending: pending.map((p) => ({
      rule: p.alert.rule,
      status: p.alert.status,
      startsAt: p.alert.startsAt,
      pendingSinceMs: p.pendingSinceMs === null ? null : p.pendingSinceMs - T0,
      firesAtMs: p.firesAtMs === null ? null : p.firesAtMs - T0,
      inhibitedBy: p.inhibitedBy.map(name),
    })),
    inhibited,
  };
}

const iso = (offsetMs: number): string => new Date(T0 + offsetMs).toISOString();

describe("pendingAlerts and alertInhibitors", () => {
  it.each<
    [string, Parameters<typeof timeline>[0], Parameters<typeof timeline>[1], number, ReturnType<typeof views>]
  >([
    ["nothing pending on a healthy target", [low(10_000)], [[0, 5]], 1000, { pending: [], inhibited: {} }],
    [
      "a pending alert says when it became pending and when its `for` elapses",
      [low(10_000)],
      [
        [0, 2],
        [4000, 2],
      ],
      5000,
      {
        pending: [
          {
            rule: "low_sources",
            status: "firing",
            startsAt: iso(0),
            pendingSinceMs: 0,
            firesAtMs: 10_000,
            inhibitedBy: [],
          },
        ],
        inhibited: { low_sources: [] },
      },
    ],
    [
      "a pending alert held by a firing upstream_error names it; the inhibitor itself is never inhibited",
      [upstream, low(10_000)],
      [
        [0, 2],
        [1000, "fail"],
        [2000, "fail"],
        [30_000, "tick"],
      ],
      30_000,
      {
        pending: [
          {
            rule: "low_sources",
            status: "firing",
            startsAt: iso(0),
            pendingSinceMs: 0,
            firesAtMs: 10_000,
            inhibitedBy: ["upstream_error"],
          },
        ],
        inhibited: { upstream_error: [], low_sources: ["upstream_error"] },
      },
    ],
    [
      "a firing alert held by a firing upstream_error names it",
      [upstream, low(0)],
      [
        [0, 2],
        [1000, "fail"],
        [2000, "fail"],
      ],
      2000,
      { pending: [], inhibited: { low_sources: ["upstream_error"], upstream_error: [] } },
    ],
    [
      "once upstream_error resolves, nothing is inhibited",
      [upstream, low(0)],
      [
        [0, 2],
        [1000, "fail"],
        [2000, "fail"],
        [3000, 2],
      ],
      3000,
      { pending: [], inhibited: { low_sources: [], upstream_error: [] } },
    ],
    [
      "a pending alert whose condition cleared is no longer pending",
      [low(10_000)],
      [
        [0, 2],
        [1000, 5],
      ],
      2000,
      { pending: [], inhibited: {} },
    ],
  ])("%s", (_name, rules, steps, atMs, expected) => {
    const { state, transitions } = timeline(rules, steps);
    expect(views(state, transitions, atMs)).toEqual(expected);
  });

  it("an unknown fingerprint has no inhibitors", () => {
    const { state } = timeline(
      [upstream, low(0)],
      [
        [0, "fail"],
        [1000, "fail"],
      ],
    );
    expect(alertInhibitors(state)("0000000000000000")).toEqual([]);
  });
});
