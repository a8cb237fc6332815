// The backtest's simulated sink: the live feed's muting (silences, cause rules) and the live grouping timers in virtual time.
import { describe, expect, it } from "vitest";
import { simulateSink, simulateSinks } from "../../src/backtest/sink-sim.js";
import { makeAlert, makeEvent, nthAlert, resolvedOf, sinkOf } from "../sinks/chatops/helpers.js";

const T0 = Date.parse("2026-11-22T10:00:00.000Z");
const GROUPED = { groupBy: [], groupWaitMs: 5_000, groupIntervalMs: 60_000, repeatIntervalMs: 4 * 3_600_000 };

describe("simulated sink", () => {
  it("mutes a child of a firing cause alert and a silenced transition, as the live feed does", () => {
    const sink = simulateSink(sinkOf("webhook", "http://127.0.0.1:9/h"), T0);
    sink.offer(makeEvent(1, nthAlert(1, { causedBy: "upstream_down" })), T0);
    sink.offer(makeEvent(2, nthAlert(2, { silencedBy: ["maint"] })), T0);
    sink.offer(makeEvent(3, nthAlert(3)), T0);
    sink.drain();
    const tally = sink.tally();
    expect(tally).toMatchObject({ notifications: 1, alerts: 1, silenced: 2, filtered: 0 });
    expect(tally.messages[0]?.alerts.map((a) => a.fingerprint)).toEqual([nthAlert(3).fingerprint]);
  });

  it("waits the group wait, then gathers what came within the group interval into one notification", () => {
    const sink = simulateSink(sinkOf("webhook", "http://127.0.0.1:9/h", GROUPED), T0);
    sink.offer(makeEvent(1, nthAlert(1)), T0);
    sink.offer(makeEvent(2, nthAlert(2)), T0 + 1_000);
    sink.advance(T0 + 4_999);
    expect(sink.tally().notifications).toBe(0);
    sink.advance(T0 + 5_000);
    sink.offer(makeEvent(3, resolvedOf(nthAlert(1))), T0 + 10_000);
    sink.offer(makeEvent(4, nthAlert(4)), T0 + 20_000);
    sink.advance(T0 + 64_999);
    expect(sink.tally().notifications).toBe(1);
    sink.advance(T0 + 65_000);
    const { messages, repeats } = sink.tally();
    expect(messages.map((m) => [m.atMs - T0, m.seqs])).toEqual([
      [5_000, [1, 2]],
      [65_000, [3, 4]],
    ]);
    expect(repeats).toBe(0);
  });

  it("runs the sinks' timers `speed` times slower than recorded time (a fast simulator's recording)", () => {
    const [sink] = simulateSinks([sinkOf("webhook", "http://127.0.0.1:9/h", GROUPED)], T0, 20);
    sink?.offer(makeEvent(1, makeAlert()), T0);
    sink?.advance(T0 + 99_999);
    expect(sink?.tally().notifications).toBe(0);
    sink?.advance(T0 + 100_000); // 5 s of the sink's clock
    expect(sink?.tally().messages.map((m) => m.atMs - T0)).toEqual([100_000]);
  });
});
