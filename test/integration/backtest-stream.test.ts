// A streamed target's recording holds the SSE messages and what the stream fed each target; its backtest replays
// them through the stream decoder and the engine to the transitions the live daemon published.
import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { readRecording } from "../../src/backtest/reader.js";
import { replayRecording } from "../../src/backtest/replay.js";
import type { AlertEvent } from "../../src/domain/events.js";
import { makeTempDir, startTestApp, type TestApp } from "./harness.js";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const PAIR = "STRK/USD";
/** The simulated market runs 20× faster than real time: the 1 s stream is a price every 50 ms of real time. */
const SPEED = 20;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("backtest of a streamed target's recording (real daemon, simulator stream)", () => {
  it("records SSE messages and stream deliveries, and replays a step and its drop back to the live transitions", async () => {
    const recordingDir = join(makeTempDir(), "recording");
    t = await startTestApp({
      upstream: { simulator: { speed: SPEED }, transport: "stream", stream: { historicalPrices: 3 } },
      monitors: { offchain: [{ pair: PAIR, periodMs: 1_000, interval: "100ms" }] },
      rules: [
        { kind: "price_level", market: "offchain", direction: "above", threshold: 1e9 },
        { kind: "price_change", id: "move", windowMs: 10_000, threshold: 0.02 },
      ],
      recording: { enabled: true, dir: recordingDir },
    });
    const firing = (e: AlertEvent): boolean => e.alert.rule === "price_change" && e.alert.status === "firing";
    await sleep(2_000); // the price window fills from the stream
    const spike = await t.injectFault({ kind: "spike", pair: PAIR, factor: 1.05 });
    await t.waitForAlert(firing, 10_000, "price_change firing");
    await t.removeFault(spike);
    await sleep(2_000); // the drop back, and whatever it resolves
    const live = t.alertEvents();
    const config = t.config;
    await t.stop();

    const lines = [...readRecording(recordingDir)].flatMap((item) =>
      item.kind === "line" ? [item.line] : [],
    );
    const streamed = lines.filter((line) => line.type === "stream");
    expect(lines.some((line) => line.type === "sse" && line.url.includes("/multi/stream"))).toBe(true);
    expect(streamed.some((line) => line.event === "price")).toBe(true);
    expect(streamed.some((line) => line.event === "history")).toBe(true);

    const result = replayRecording(readRecording(recordingDir), config);
    expect(result.problems).toEqual([]);
    expect(result.observations).toBeGreaterThan(10);
    const replayed = result.transitions.map(({ alert }) => [alert.fingerprint, alert.status, alert.reason]);
    expect(replayed).toEqual(live.map(({ alert }) => [alert.fingerprint, alert.status, alert.reason]));
    expect(replayed.length).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
