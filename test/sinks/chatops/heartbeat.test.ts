// The heartbeat sink: pings while ready, the fail URL (if any) while not, sink_error on failures, User-Agent.
import { afterEach, describe, expect, it } from "vitest";
import type { HeartbeatSinkConfig } from "../../../src/config/types.js";
import { heartbeatAction } from "../../../src/sinks/chatops/heartbeat.js";
import { USER_AGENT } from "../../../src/version.js";
import { startHarness, type Harness } from "./harness.js";
import { metricValue } from "./helpers.js";
import { waitFor } from "../../wait-for.js";

let h: Harness | undefined;
let ready = true;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
  ready = true;
});

const heartbeat = (url: string, overrides: Partial<HeartbeatSinkConfig> = {}): HeartbeatSinkConfig => ({
  kind: "heartbeat",
  name: "hc",
  enabled: true,
  url: `${url}/ping/SECRET-UUID`,
  method: "GET",
  intervalMs: 60_000,
  failUrl: "",
  timeoutMs: 600_000,
  failureThreshold: 3,
  ...overrides,
});
const paths = (): string[] => h!.rx.requests.map((r) => `${r.method} ${r.url}`);

describe("heartbeatAction", () => {
  const sink = { url: "u", failUrl: "f", intervalMs: 60_000 };
  it.each([
    ["ready → ping url", true, true, sink, { kind: "ping", url: "u" }],
    [
      "never ready yet → look again in 1 s, send nothing",
      false,
      false,
      sink,
      { kind: "wait", delayMs: 1_000 },
    ],
    ["was ready, now not → ping failUrl", false, true, sink, { kind: "ping", url: "f" }],
    [
      "was ready, now not, no failUrl → stay silent",
      false,
      true,
      { ...sink, failUrl: "" },
      { kind: "wait", delayMs: 60_000 },
    ],
  ] as const)("%s", (_name, isReady, wasReady, config, expected) => {
    expect(heartbeatAction(config, isReady, wasReady)).toEqual(expected);
  });
});

describe("heartbeat sink", () => {
  it("pings every intervalMs while ready, with our User-Agent, and the fail URL while not", async () => {
    h = await startHarness((url) => [heartbeat(url, { failUrl: `${url}/ping/SECRET-UUID/fail` })], {
      isHealthy: () => ready,
    });
    await h.clock.advance(0); // the first ping goes out at start
    await waitFor(() => expect(h!.rx.requests).toHaveLength(1));
    expect(h.rx.requests[0]!.headers["user-agent"]).toBe(USER_AGENT);
    await h.waitForAttempts(1, "hc");
    await h.clock.advance(59_999);
    expect(h.rx.requests).toHaveLength(1);
    await h.clock.advance(1);
    await waitFor(() => expect(h!.rx.requests).toHaveLength(2));
    await h.waitForAttempts(2, "hc");
    ready = false;
    await h.clock.advance(60_000);
    await waitFor(() => expect(h!.rx.requests).toHaveLength(3));
    expect(paths()).toEqual(["GET /ping/SECRET-UUID", "GET /ping/SECRET-UUID", "GET /ping/SECRET-UUID/fail"]);
    expect(h.chatops.status()).toEqual([
      {
        name: "hc",
        kind: "heartbeat",
        pending: 0,
        failing: false,
        consecutiveFailures: 0,
        lastError: null,
        running: true,
        groups: 0,
      },
    ]);
    await h.chatops.stop(0);
    expect(h.log.text()).not.toContain("SECRET-UUID");
  });

  it("sends nothing before the daemon was ready once, and nothing on stop", async () => {
    ready = false;
    h = await startHarness((url) => [heartbeat(url)], { isHealthy: () => ready });
    await h.clock.advance(10_000);
    expect(h.rx.requests).toHaveLength(0);
    ready = true;
    await h.clock.advance(1_000);
    await waitFor(() => expect(h!.rx.requests).toHaveLength(1));
    await h.waitForAttempts(1, "hc");
    await h.chatops.stop(0);
    await h.clock.advance(120_000);
    expect(h.rx.requests).toHaveLength(1);
  });

  it("raises sink_error after failureThreshold failed pings (at once on 404) and resolves it on the next good one", async () => {
    h = await startHarness((url) => [heartbeat(url, { intervalMs: 10_000 })]);
    h.rx.fallback = { status: 500 };
    await h.clock.advance(0);
    for (let i = 1; i <= 3; i++) {
      await h.waitForAttempts(i, "hc");
      if (i < 3) await h.clock.advance(10_000);
    }
    await waitFor(() => expect(h!.raised).toHaveLength(1));
    expect(h.raised[0]).toMatchObject({ rule: "sink_error", labels: { sink: "hc", endpoint: "heartbeat" } });
    h.rx.fallback = { status: 200 };
    await h.clock.advance(10_000);
    await waitFor(() => expect(h!.raised).toHaveLength(2));
    expect(h.raised[1]!.status).toBe("resolved");
    h.rx.fallback = { status: 404 };
    await h.clock.advance(10_000);
    await waitFor(() => expect(h!.raised).toHaveLength(3));
    expect(await metricValue(h.metrics.sinkDeliveries, { sink: "hc", outcome: "misconfigured" })).toBe(1);
  });
});
