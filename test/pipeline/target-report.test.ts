// The API's per-target report: the latest poll as the runner wrote it, when the next poll is due, the join with the data view.
import { describe, expect, it } from "vitest";
import { PmError } from "../../src/domain/errors.js";
import type { TargetDataView } from "../../src/domain/monitor.js";
import {
  joinTargetReports,
  lastPollOf,
  nextPollDueMs,
  targetFacts,
  type LastPoll,
  type PollFields,
  type StreamFields,
} from "../../src/pipeline/target-report.js";
import { BTC_OFF, ETH_OFF, T0, VAULT } from "../domain/helpers.js";

const error = new PmError("PM_ERR_UPSTREAM_TIMEOUT", "timed out", { retryable: true });
const ok = (endedAtMs: number, durationMs: number): LastPoll => ({
  endedAtMs,
  durationMs,
  ok: true,
  consecutiveFailures: 0,
  error: null,
});

describe("lastPollOf", () => {
  it.each<[string, PollFields, LastPoll | null]>([
    [
      "before the first poll",
      { lastPollAtMs: Number.NaN, lastPollDurationMs: 0, lastError: null, failures: 0 },
      null,
    ],
    ["a success", { lastPollAtMs: T0, lastPollDurationMs: 12, lastError: null, failures: 0 }, ok(T0, 12)],
    [
      "a failure streak",
      { lastPollAtMs: T0, lastPollDurationMs: 2000, lastError: error, failures: 3 },
      { endedAtMs: T0, durationMs: 2000, ok: false, consecutiveFailures: 3, error },
    ],
  ])("%s", (_name, fields, expected) => {
    expect(lastPollOf(fields)).toEqual(expected);
  });
});

describe("nextPollDueMs", () => {
  it.each<[string, LastPoll | null, number, number | null]>([
    ["no poll yet", null, 1000, null],
    ["one period after the latest poll started", ok(T0 + 30, 30), 1000, T0 + 1000],
    ["at once after a poll longer than its period", ok(T0 + 1500, 1500), 1000, T0 + 1500],
    [
      "unknown while failing (random backoff)",
      { ...ok(T0, 5), ok: false, consecutiveFailures: 1, error },
      1000,
      null,
    ],
  ])("%s", (_name, lastPoll, periodMs, expected) => {
    expect(nextPollDueMs(lastPoll, periodMs)).toBe(expected);
  });
});

describe("targetFacts", () => {
  const polled = (atMs: number, durationMs: number): PollFields => ({
    lastPollAtMs: atMs,
    lastPollDurationMs: durationMs,
    lastError: null,
    failures: 0,
  });
  const never = polled(Number.NaN, 0);
  const event = (atMs: number): LastPoll => ok(atMs, 0);
  it.each<[string, PollFields, StreamFields | null, LastPoll | null, boolean]>([
    ["a polled target: its latest poll", polled(T0, 12), null, ok(T0, 12), false],
    ["streaming, nothing yet", never, { mode: "stream", lastEventAtMs: Number.NaN }, null, true],
    ["streaming: its latest streamed price", never, { mode: "stream", lastEventAtMs: T0 }, event(T0), true],
    [
      "streaming with a later component poll: that poll",
      polled(T0 + 50, 20),
      { mode: "stream", lastEventAtMs: T0 },
      ok(T0 + 50, 20),
      true,
    ],
    [
      "fallen back to polls: its polls (or the stale failure), never the stream's prices",
      { lastPollAtMs: T0, lastPollDurationMs: 0, lastError: error, failures: 1 },
      { mode: "poll", lastEventAtMs: T0 + 100 },
      { endedAtMs: T0, durationMs: 0, ok: false, consecutiveFailures: 1, error },
      false,
    ],
  ])("%s", (_name, poll, streamed, lastPoll, streaming) => {
    expect(targetFacts(BTC_OFF, 1000, poll, streamed)).toEqual({
      spec: BTC_OFF,
      periodMs: 1000,
      lastPoll,
      streaming,
    });
  });

  it("a streaming target has no next poll due", () => {
    const [report] = joinTargetReports(
      [targetFacts(BTC_OFF, 1000, polled(T0, 10), { mode: "stream", lastEventAtMs: T0 + 5 })],
      [],
      T0,
    );
    expect(report?.nextPollAtMs).toBeNull();
    expect(report?.lastPoll).toEqual(ok(T0 + 5, 0));
  });
});

describe("joinTargetReports", () => {
  const view = (dataAtMs: number | null): TargetDataView => ({
    spec: BTC_OFF,
    lastSuccessMs: T0,
    dataAtMs,
    latest: null,
    history: [],
  });

  it("joins each running target with its view by id, sorted by id, ages on the given clock", () => {
    const reports = joinTargetReports(
      [
        { spec: VAULT, periodMs: 15_000, lastPoll: null, streaming: false },
        { spec: ETH_OFF, periodMs: 1000, lastPoll: null, streaming: false },
        { spec: BTC_OFF, periodMs: 1000, lastPoll: ok(T0 + 10, 10), streaming: false },
      ],
      [view(T0 - 2000), { ...view(T0), spec: { ...BTC_OFF, id: "offchain:gone" } }],
      T0 + 500,
    );
    expect(
      reports.map((r) => ({ id: r.spec.id, ageMs: r.ageMs, next: r.nextPollAtMs, data: r.data !== null })),
    ).toEqual([
      { id: BTC_OFF.id, ageMs: 2500, next: T0 + 1000, data: true },
      { id: ETH_OFF.id, ageMs: null, next: null, data: false },
      { id: VAULT.id, ageMs: null, next: null, data: false },
    ]);
  });

  it("a price stamped ahead of the clock has a negative age (the upstream's clock runs ahead)", () => {
    const [report] = joinTargetReports(
      [{ spec: BTC_OFF, periodMs: 1000, lastPoll: null, streaming: false }],
      [view(T0 + 300)],
      T0,
    );
    expect(report?.ageMs).toBe(-300);
  });
});
