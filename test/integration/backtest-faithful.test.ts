// The live daemon and the backtest of its own recording agree: same transitions (fingerprint, status, time within a
// poll) and, under the shipped default grouping, the same group notifications the webhook receives.
import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { readRecording } from "../../src/backtest/reader.js";
import { replayRecording } from "../../src/backtest/replay.js";
import type { AlertEvent } from "../../src/domain/events.js";
import { startReceiver, type Receiver } from "../sinks/chatops/helpers.js";
import { makeTempDir, startTestApp, type TestApp } from "./harness.js";

let t: TestApp | undefined;
let rx: Receiver | undefined;
afterEach(async () => {
  await t?.stop();
  await rx?.close();
  t = undefined;
  rx = undefined;
});

const PAIR = "STRK/USD";
/** The simulated market runs 20× faster than real time: a 200 ms poll is 4 s of market time. */
const SPEED = 20;
const POLL_MS = 200;
const MARKET_POLL_MS = POLL_MS * SPEED;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A group notification as the webhook posts it (the fields compared). */
interface GroupBody {
  readonly type: string;
  readonly groupKey: string;
  readonly repeat: boolean;
  readonly alerts: readonly { readonly alert: { readonly fingerprint: string; readonly status: string } }[];
  readonly events: readonly AlertEvent[];
}

/** Each webhook POST: its group, whether it repeats, the alerts it lists and the transitions it carries. */
function posted(rx: Receiver): { group: string; repeat: boolean; alerts: string[]; transitions: string[] }[] {
  return rx.requests
    .filter((r) => r.url === "/hook")
    .map((r) => {
      const body = JSON.parse(r.body) as GroupBody;
      expect(body.type).toBe("group");
      return {
        group: body.groupKey,
        repeat: body.repeat,
        alerts: body.alerts.map(({ alert }) => `${alert.fingerprint}:${alert.status}`),
        transitions: body.events.map(({ alert }) => `${alert.fingerprint}:${alert.status}`),
      };
    });
}

/** Wait until the webhook has received every transition in `live` (the group timers decide when). */
async function untilDelivered(rx: Receiver, live: readonly AlertEvent[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (posted(rx).flatMap((p) => p.transitions).length < live.length) {
    if (Date.now() > deadline) throw new Error("the webhook did not receive every transition in time");
    await sleep(100);
  }
}

describe("backtest of the daemon's own recording (real daemon, simulator, webhook receiver)", () => {
  it("replays an incident to the same transitions and the same group notifications (default grouping)", async () => {
    rx = await startReceiver();
    const recordingDir = join(makeTempDir(), "recording");
    t = await startTestApp({
      upstream: { simulator: { speed: SPEED } },
      monitors: {
        offchain: [{ pair: PAIR, periodMs: POLL_MS }],
        publishers: [{ network: "starknet-mainnet", publisherType: "Spot", periodMs: POLL_MS }],
      },
      rules: [
        { kind: "price_change", id: "move", windowMs: 30_000, threshold: 0.02 },
        { kind: "publisher_stale", threshold: 75_000 },
        { kind: "upstream_error", threshold: 3 },
      ],
      sinks: [
        {
          kind: "webhook",
          url: `${rx.url}/hook`,
          secret: "0123456789abcdef",
          minSeverity: "info",
          ratePerMinute: 6_000,
          burst: 100,
        },
      ],
      recording: { enabled: true, dir: recordingDir },
      // the shipped grouping (the harness turns it off): one group, groupWaitMs/groupIntervalMs/repeat defaults
      grouping: { groupBy: [] },
    });
    const firing = (rule: string) => (e: AlertEvent) => e.alert.rule === rule && e.alert.status === "firing";
    const resolvedAfter = (fired: AlertEvent) => (e: AlertEvent) =>
      e.seq > fired.seq && e.alert.fingerprint === fired.alert.fingerprint && e.alert.status === "resolved";

    // a price step (up, then back down), a silent publisher, an upstream outage: each fires and resolves
    await sleep(2_000); // the price window fills
    const spike = await t.injectFault({ kind: "spike", pair: PAIR, factor: 1.05 });
    const up = await t.waitForAlert(firing("price_change"), 8_000, "price_change firing");
    const upResolved = await t.waitForAlert(resolvedAfter(up), 8_000, "price_change resolving");
    await t.removeFault(spike);
    const down = await t.waitForAlert(
      (e) => e.seq > upResolved.seq && firing("price_change")(e),
      8_000,
      "the drop back",
    );
    await t.waitForAlert(resolvedAfter(down), 8_000, "the drop resolving");
    const frozen = await t.injectFault({
      kind: "frozenPublisher",
      publisher: "FOURLEAF",
      network: "starknet-mainnet",
    });
    const stale = await t.waitForAlert(firing("publisher_stale"), 10_000, "publisher_stale firing");
    await t.removeFault(frozen);
    await t.waitForAlert(resolvedAfter(stale), 5_000, "publisher_stale resolving");
    const outage = await t.injectFault({
      kind: "outage",
      status: 503,
      endpoint: "pair_price",
      pair: PAIR,
      retryAfterS: 0,
    });
    const outageFired = await t.waitForAlert(firing("upstream_error"), 8_000, "upstream_error firing");
    await t.removeFault(outage);
    await t.waitForAlert(resolvedAfter(outageFired), 8_000, "upstream_error resolving");
    const live = t.alertEvents();
    // the transitions after the group's first notification leave one group interval (60 s) after it
    await untilDelivered(rx, live, 90_000);
    const config = t.config;
    await t.stop();

    const result = replayRecording(readRecording(recordingDir), config);
    expect(result.problems.filter((p) => p.kind !== "missing_target")).toEqual([]);
    const replayed = result.transitions.map(({ alert }) => [alert.fingerprint, alert.status, alert.reason]);
    expect(replayed).toEqual(live.map(({ alert }) => [alert.fingerprint, alert.status, alert.reason]));
    live.forEach((event, i) => {
      const atMs = result.transitions[i]?.atMs ?? Number.NaN;
      const liveMs = Date.parse(
        event.alert.status === "firing" ? event.alert.startsAt : (event.alert.endsAt ?? ""),
      );
      expect(Math.abs(atMs - liveMs)).toBeLessThanOrEqual(MARKET_POLL_MS);
    });
    const [hook] = result.sinks;
    const bySeq = new Map(
      result.transitions.map(({ seq, alert }) => [seq, `${alert.fingerprint}:${alert.status}`]),
    );
    const predicted = (hook?.messages ?? []).map((m) => ({
      group: m.group,
      repeat: m.repeat,
      alerts: m.alerts.map((a) => `${a.fingerprint}:${a.status}`),
      transitions: m.seqs.map((seq) => bySeq.get(seq) ?? `seq ${seq}`),
    }));
    const received = posted(rx);
    expect(predicted).toEqual(received);
    expect(hook?.notifications).toBe(received.length);
    // grouping did something: fewer notifications than transitions, and more than one
    expect(received.length).toBeGreaterThanOrEqual(2);
    expect(received.length).toBeLessThan(live.length);
  }, 150_000);
});
