// Grouping on the real daemon: a market-wide drop on the embedded simulator is one webhook notification to
// open it and one to close it, each listing every alert, with a restart in between.
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { AlertEvent } from "../../src/domain/events.js";
import { startReceiver, type Receiver } from "../sinks/chatops/helpers.js";
import { buildConfig, makeTempDir, startAppWithConfig, type TestApp } from "./harness.js";
import { waitFor } from "../wait-for.js";

const PAIRS = ["BTC/USD", "ETH/USD", "SOL/USD", "STRK/USD"];
const GROUP_WAIT_MS = 2_500;
const GROUP_INTERVAL_MS = 1_500;
/** The price_change window: longer than the group wait plus detection, so no alert resolves before the restart. */
const WINDOW_MS = 5_000;

interface GroupBody {
  readonly type: string;
  readonly groupKey: string;
  readonly status: "firing" | "resolved";
  readonly seqs: number[];
  readonly events: AlertEvent[];
  readonly alerts: { readonly state: string; readonly seq: number; readonly alert: AlertEvent["alert"] }[];
}

let apps: TestApp[] = [];
let rx: Receiver | undefined;
let dir: string | undefined;
afterEach(async () => {
  for (const app of apps) await app.stop();
  await rx?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  apps = [];
  rx = undefined;
  dir = undefined;
});

const bodies = (): GroupBody[] => rx!.requests.map((r) => JSON.parse(r.body) as GroupBody);

describe("notification grouping (real daemon, embedded simulator, webhook receiver)", () => {
  it("every pair drops 6 %: one notification opens the incident, one closes it, across a restart", async () => {
    rx = await startReceiver();
    dir = makeTempDir();
    const config = buildConfig(
      {
        monitors: { offchain: PAIRS.map((pair) => ({ pair, periodMs: 100 })) },
        rules: [{ kind: "price_change", windowMs: WINDOW_MS, threshold: 0.03 }],
        sinks: [
          {
            kind: "webhook",
            url: `${rx.url}/hook`,
            secret: "0123456789abcdef",
            groupBy: [],
            groupWaitMs: GROUP_WAIT_MS,
            groupIntervalMs: GROUP_INTERVAL_MS,
          },
        ],
      },
      dir,
    );
    const first = await startAppWithConfig(config);
    apps.push(first);
    await first.waitForEvent(
      (e) => e.type === "price" && Date.parse(e.tick.observedAt) >= first.startedAtMs + WINDOW_MS + 500,
      10_000,
      "a full window of prices",
    );
    const injectedAtMs = Date.now();
    for (const pair of PAIRS) await first.injectFault({ kind: "spike", pair, factor: 0.94 });

    // One notification opens the incident, within the group wait plus detection, naming every pair.
    await waitFor(() => expect(rx!.requests).toHaveLength(1), { timeout: 8_000, interval: 20 });
    const openedAfterMs = Date.now() - injectedAtMs;
    expect(openedAfterMs).toBeLessThan(GROUP_WAIT_MS + 2_500); // detection: a few 100 ms polls
    const [open] = bodies();
    expect(open).toMatchObject({ type: "group", groupKey: "{}", status: "firing" });
    expect(open!.alerts.map((a) => a.state)).toEqual(PAIRS.map(() => "new"));
    expect(open!.alerts.map((a) => a.alert.labels.pair).sort()).toEqual([...PAIRS].sort());
    expect(open!.seqs).toEqual(open!.events.map((e) => e.seq));
    const firingSeqs = first.alertEvents().map((e) => e.seq);
    expect(open!.seqs).toEqual(firingSeqs);

    // A restart before the market recovers: the group's memory is on disk with the outbox.
    await first.stop();
    apps = [];
    const second = await startAppWithConfig(config, { dir });
    dir = undefined; // removed by the second daemon's stop
    apps.push(second);

    // The new daemon's simulator has no fault: every alert resolves, and one notification closes the group.
    await waitFor(
      () => {
        const resolved = second.alertEvents().filter((e) => e.alert.status === "resolved");
        expect(resolved).toHaveLength(PAIRS.length);
      },
      { timeout: 15_000, interval: 50 },
    );
    await waitFor(() => expect(rx!.requests.length).toBeGreaterThanOrEqual(2), { timeout: 8_000 });
    // nothing else may come: a late transition would be sent a group interval after the close, or a group wait after a
    // new group opened
    await new Promise((resolve) => setTimeout(resolve, Math.max(GROUP_INTERVAL_MS, GROUP_WAIT_MS) + 500));
    expect(rx.requests).toHaveLength(2);
    const close = bodies()[1]!;
    expect(close).toMatchObject({ type: "group", groupKey: "{}", status: "resolved" });
    expect(close.alerts.map((a) => a.state)).toEqual(PAIRS.map(() => "resolved"));
    expect(close.alerts.map((a) => a.alert.labels.pair).sort()).toEqual([...PAIRS].sort());
    const resolveSeqs = second
      .alertEvents()
      .filter((e) => e.alert.status === "resolved")
      .map((e) => e.seq);
    expect(close.seqs).toEqual(resolveSeqs);
    // Each transition reached exactly one notification; the WebSocket/journal kept every one.
    expect([...open!.seqs, ...close.seqs]).toEqual(second.alertEvents().map((e) => e.seq));
  }, 60_000);
});
