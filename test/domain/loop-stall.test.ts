// Table tests of the pure stall decision: which sample gaps are stalls, how long verdicts are held, when it recovers.
import { describe, expect, it } from "vitest";
import {
  holdsVerdict,
  initialLoopStallState,
  quietSample,
  sampleLoop,
  type LoopStallState,
} from "../../src/domain/loop-stall.js";

const SETTINGS = { sampleIntervalMs: 1_000, thresholdMs: 2_000, holdMs: 10_000 };

/** Feed samples at these times from a fresh state at 0: the event kinds and the hold after each. */
function run(samplesMs: readonly number[]): { kind: string; held: boolean }[] {
  let state: LoopStallState = initialLoopStallState(0);
  return samplesMs.map((atMs) => {
    const next = sampleLoop(state, atMs, SETTINGS);
    state = next.state;
    return { kind: next.event.kind, held: holdsVerdict(state, atMs) };
  });
}

describe("sampleLoop / holdsVerdict", () => {
  it.each([
    [
      "on-time samples hold nothing",
      [1_000, 2_000, 3_000],
      ["on_time", "on_time", "on_time"],
      [false, false, false],
    ],
    ["a gap of interval + threshold is not a stall", [3_000], ["on_time"], [false]],
    ["a gap 1 ms longer is", [3_001], ["stalled"], [true]],
    [
      "extra samples in between (the pipeline's) are fine",
      [100, 200, 1_200, 2_200],
      ["on_time", "on_time", "on_time", "on_time"],
      [false, false, false, false],
    ],
    [
      "a stall holds until holdMs after it, then recovers",
      [6_000, 7_000, 15_000, 16_000, 17_000],
      // 15 000 is a stall itself (gap 8 s): the hold moves to 25 000
      ["stalled", "on_time", "stalled_again", "on_time", "on_time"],
      [true, true, true, true, true],
    ],
    [
      "recovery comes with the first on-time sample at the end of the hold",
      [6_000, 7_000, 8_000, 9_000, 10_000, 11_000, 12_000, 13_000, 14_000, 15_000, 16_000, 17_000],
      [
        "stalled",
        "on_time",
        "on_time",
        "on_time",
        "on_time",
        "on_time",
        "on_time",
        "on_time",
        "on_time",
        "on_time",
        "recovered",
        "on_time",
      ],
      [true, true, true, true, true, true, true, true, true, true, false, false],
    ],
    [
      "a sample from the past (another caller) is not a stall nor a rewind",
      [1_000, 900, 2_000],
      ["on_time", "on_time", "on_time"],
      [false, false, false],
    ],
  ])("%s", (_name, samples, kinds, held) => {
    const result = run(samples);
    expect(result.map((r) => r.kind)).toEqual(kinds);
    expect(result.map((r) => r.held)).toEqual(held);
  });

  it("dates the stall from when the missed sample was due and keeps the longest lag", () => {
    const first = sampleLoop(initialLoopStallState(0), 6_000, SETTINGS);
    expect(first.event).toEqual({ kind: "stalled", lagMs: 5_000, sinceMs: 1_000 });
    const again = sampleLoop(first.state, 15_000, SETTINGS);
    expect(again.state.maxLagMs).toBe(8_000);
    let state = again.state;
    let event = again.event;
    for (let atMs = 16_000; atMs <= 25_000; atMs += 1_000)
      ({ state, event } = sampleLoop(state, atMs, SETTINGS));
    expect(event).toEqual({ kind: "recovered", sinceMs: 1_000, maxLagMs: 8_000 });
  });

  it("quietSample is sampleLoop's state for an on-time sample outside an episode, and null for any other", () => {
    // every sample time of the tables above, from each state they pass through
    let state: LoopStallState = initialLoopStallState(0);
    let quiet = 0;
    for (const atMs of [100, 200, 1_200, 3_200, 3_201, 6_202, 7_000, 15_000, 17_300, 18_000, 900, 30_000]) {
      const full = sampleLoop(state, atMs, SETTINGS);
      const fast = quietSample(state, atMs, SETTINGS);
      if (full.event.kind === "on_time" && state.stalledSinceMs === null) {
        expect(fast).toEqual(full.state);
        quiet++;
      } else expect(fast).toBeNull();
      state = full.state;
    }
    expect(quiet).toBeGreaterThan(3);
  });

  it("quietSample keeps the very state for a sample at or before the last one (no copy per poll of a wake-up)", () => {
    const state = quietSample(initialLoopStallState(0), 500, SETTINGS)!;
    expect(state.lastSampleMs).toBe(500);
    expect(quietSample(state, 500, SETTINGS)).toBe(state);
    expect(quietSample(state, 499, SETTINGS)).toBe(state);
    const later = quietSample(state, 501, SETTINGS);
    expect(later).not.toBe(state);
    expect(later).toEqual({ ...state, lastSampleMs: 501 });
  });
});
