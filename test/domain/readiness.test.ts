// The readiness decision of /readyz, table-driven over small status records.
import { describe, expect, it } from "vitest";
import {
  decideReadiness,
  decideSelfHealth,
  type ReadinessStatus,
  type SinkReadiness,
  type TargetReadiness,
} from "../../src/domain/readiness.js";

const ok = (id: string): TargetReadiness => ({ id, health: { kind: "ok" } });
const waiting = (id: string): TargetReadiness => ({ id, health: { kind: "waiting" } });
const failing = (id: string, everSucceeded = false, consecutiveFailures = 3): TargetReadiness => ({
  id,
  health: { kind: "failing", code: "PM_ERR_UPSTREAM_NETWORK", consecutiveFailures, everSucceeded },
});
const sink = (overrides: Partial<SinkReadiness> = {}): SinkReadiness => ({
  name: "pager",
  kind: "pagerduty",
  running: true,
  alertFiring: false,
  consecutiveFailures: 0,
  lastError: null,
  ...overrides,
});
const status = (overrides: Partial<ReadinessStatus> = {}): ReadinessStatus => ({
  listening: true,
  pipelineStarted: true,
  targets: [ok("offchain:BTC/USD"), ok("vault:v1")],
  sinks: [sink()],
  ...overrides,
});

describe("decideReadiness", () => {
  const cases: readonly {
    readonly name: string;
    readonly status: ReadinessStatus;
    readonly reasons: readonly string[];
  }[] = [
    { name: "all targets ok, sinks healthy", status: status(), reasons: [] },
    { name: "no targets, no sinks", status: status({ targets: [], sinks: [] }), reasons: [] },
    {
      name: "not listening yet",
      status: status({ listening: false }),
      reasons: ["HTTP server not listening"],
    },
    {
      name: "before start",
      status: { listening: false, pipelineStarted: false, targets: [], sinks: [] },
      reasons: ["HTTP server not listening", "pipeline not started"],
    },
    {
      name: "a target still waiting for its first poll",
      status: status({ targets: [ok("a"), waiting("b")] }),
      reasons: ["1 target(s) waiting for their first poll: b"],
    },
    {
      name: "a target that never succeeded",
      status: status({ targets: [failing("a"), ok("b")] }),
      reasons: [
        "1 target(s) failing: a (PM_ERR_UPSTREAM_NETWORK, 3 consecutive failure(s), no successful poll since start)",
      ],
    },
    {
      name: "a target whose latest poll failed after successes",
      status: status({ targets: [failing("a", true, 1)] }),
      reasons: ["1 target(s) failing: a (PM_ERR_UPSTREAM_NETWORK, 1 consecutive failure(s))"],
    },
    {
      name: "a sink whose latest delivery failed (no alert yet)",
      status: status({ sinks: [sink({ consecutiveFailures: 1, lastError: "http_error 500" })] }),
      reasons: [
        "1 sink(s) failing: pager (pagerduty, 1 consecutive failed deliveries, last error: http_error 500)",
      ],
    },
    {
      name: "a sink with a firing sink_error",
      status: status({
        sinks: [sink({ alertFiring: true, consecutiveFailures: 4, lastError: "network ECONNREFUSED" })],
      }),
      reasons: [
        "1 sink(s) failing: pager (pagerduty, sink_error firing, 4 consecutive failed deliveries, last error: network ECONNREFUSED)",
      ],
    },
    {
      name: "a sink_error restored from before a restart, nothing delivered since",
      status: status({ sinks: [sink({ alertFiring: true })] }),
      reasons: ["1 sink(s) failing: pager (pagerduty, sink_error firing)"],
    },
    {
      name: "a configured sink whose worker is not running",
      status: status({ sinks: [sink({ running: false, lastError: "outbox could not be opened" })] }),
      reasons: ["1 sink(s) failing: pager (pagerduty, not running: outbox could not be opened)"],
    },
    {
      name: "every reason at once, in a fixed order",
      status: {
        listening: false,
        pipelineStarted: true,
        targets: [waiting("w"), failing("f")],
        sinks: [
          sink({ consecutiveFailures: 2, lastError: "timeout PM_ERR_SINK_TIMEOUT" }),
          sink({ name: "ok" }),
        ],
      },
      reasons: [
        "HTTP server not listening",
        "1 target(s) failing: f (PM_ERR_UPSTREAM_NETWORK, 3 consecutive failure(s), no successful poll since start)",
        "1 target(s) waiting for their first poll: w",
        "1 sink(s) failing: pager (pagerduty, 2 consecutive failed deliveries, last error: timeout PM_ERR_SINK_TIMEOUT)",
      ],
    },
  ];
  it.each(cases)("$name", ({ status: input, reasons }) => {
    expect(decideReadiness(input)).toEqual({ ready: reasons.length === 0, reasons });
  });

  it("names at most maxNames members per reason and counts the rest", () => {
    const targets = Array.from({ length: 12 }, (_, i) => waiting(`t${i}`));
    const sinks = Array.from({ length: 4 }, (_, i) => sink({ name: `s${i}`, running: false }));
    const { reasons } = decideReadiness(status({ targets, sinks }), 3);
    expect(reasons[0]).toBe("12 target(s) waiting for their first poll: t0, t1, t2 and 9 more");
    expect(reasons[1]).toMatch(/^4 sink\(s\) failing: s0 \(.*\), s1 \(.*\), s2 \(.*\) and 1 more$/);
  });
});

describe("decideSelfHealth (the dead-man's switches: heartbeat sink, watchdog alert)", () => {
  const cases: readonly (readonly [string, ReadinessStatus, boolean])[] = [
    ["everything works", status(), true],
    [
      "an upstream failing is the daemon doing its job",
      status({ targets: [failing("offchain:BTC/USD")] }),
      true,
    ],
    [
      "a sink failing is an alert, not the daemon's death",
      status({ sinks: [sink({ alertFiring: true, consecutiveFailures: 4 })] }),
      true,
    ],
    ["a sink that could not start", status({ sinks: [sink({ running: false })] }), true],
    ["a target still waiting for its first poll", status({ targets: [ok("a"), waiting("b")] }), false],
    ["not listening", status({ listening: false }), false],
    ["pipeline not started", status({ pipelineStarted: false }), false],
  ];
  it.each(cases)("%s", (_name, input, healthy) => {
    const verdict = decideSelfHealth(input);
    expect(verdict.ready).toBe(healthy);
    expect(verdict.reasons.length === 0).toBe(healthy);
    // readiness is never laxer than self-health
    if (!healthy) expect(decideReadiness(input).ready).toBe(false);
  });
});
