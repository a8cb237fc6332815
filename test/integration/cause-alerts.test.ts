// Alerts that name the cause on the real daemon: the simulator answers 500 on every endpoint, one upstream_down
// fires, the per-target upstream_error alerts carry causedBy, and a webhook sink gets only the parent.
import { afterEach, describe, expect, it } from "vitest";
import type { AlertEvent } from "../../src/domain/events.js";
import { startReceiver, type Receiver } from "../sinks/chatops/helpers.js";
import { startTestApp, type TestApp } from "./harness.js";
import { waitFor } from "../wait-for.js";

let t: TestApp | undefined;
let rx: Receiver | undefined;
afterEach(async () => {
  await t?.stop();
  await rx?.close();
  t = undefined;
  rx = undefined;
});

const PAIRS = ["BTC/USD", "ETH/USD", "SOL/USD", "STRK/USD"];

describe("cause alerts (real daemon, simulator faults, webhook)", () => {
  it("upstream 500 on every endpoint: one upstream_down notified, its upstream_error children only on the bus and the API", async () => {
    rx = await startReceiver();
    t = await startTestApp({
      monitors: { offchain: PAIRS.map((pair) => ({ pair, periodMs: 200 })) },
      rules: [
        { kind: "upstream_error", threshold: 3 },
        { kind: "upstream_down", threshold: 3, minFraction: 0.5, windowMs: 5_000 },
      ],
      sinks: [{ kind: "webhook", url: `${rx.url}/hook`, secret: "0123456789abcdef", minSeverity: "info" }],
    });
    await t.waitForEvent((e) => e.type === "price" && e.tick.pair === "STRK/USD", 5_000, "a first price");
    const outage = await t.injectFault({ kind: "outage", status: 500, retryAfterS: 0 });
    const parent = await t.waitForAlert(
      (e) => e.alert.rule === "upstream_down",
      8_000,
      "upstream_down firing",
    );
    expect(parent.alert.summary).toMatch(
      /^Pragma API failing \(HTTP 500\): \d of 4 targets failing since \d\d:\d\d:\d\d$/,
    );
    const children = (): readonly AlertEvent[] =>
      t!.alertEvents().filter((e) => e.alert.rule === "upstream_error");
    await waitFor(() => expect(children().filter((e) => e.alert.status === "firing")).toHaveLength(4), {
      timeout: 8_000,
    });
    for (const child of children()) expect(child.alert.causedBy).toBe(parent.alert.fingerprint);

    // the operator API shows the link too
    const answer = (await (await fetch(`${t.httpUrl}/api/v1/alerts?rule=upstream_error`)).json()) as {
      alerts: { causedBy?: string }[];
    };
    expect(answer.alerts.length).toBeGreaterThan(0);
    for (const alert of answer.alerts) expect(alert.causedBy).toBe(parent.alert.fingerprint);

    await t.removeFault(outage);
    const resolved = await t.waitForAlert(
      (e) => e.alert.rule === "upstream_down" && e.alert.status === "resolved",
      8_000,
      "upstream_down resolving",
    );
    await waitFor(() => expect(children().filter((e) => e.alert.status === "resolved")).toHaveLength(4), {
      timeout: 5_000,
    });
    // the webhook hears of the parent (firing and resolved) and of no child
    const delivered = (): string[] => rx!.requests.filter((r) => r.url === "/hook").map((r) => r.body);
    await waitFor(
      () => expect(delivered().filter((body) => body.includes(resolved.alert.summary))).toHaveLength(1),
      {
        timeout: 5_000,
      },
    );
    const bodies = delivered();
    expect(bodies.every((body) => body.includes(parent.alert.fingerprint))).toBe(true);
    for (const child of children())
      expect(bodies.some((body) => body.includes(child.alert.fingerprint))).toBe(false);
    expect(bodies).toHaveLength(2);
  });
});
