// The API's per-target report: the latest poll as the runner wrote it, when the next poll is due, the join with the data view.
import { describe, expect, it } from "vitest";
import { PmError } from "../../src/domain/errors.js";
import type { TargetDataView } from "../../src/domain/monitor.js";
import {
  joinTargetReports,
  lastPollOf,
  nextPollDueMs,
  type LastPoll,
  type PollFields,
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
        { spec: VAULT, periodMs: 15_000, lastPoll: null },
        { spec: ETH_OFF, periodMs: 1000, lastPoll: null },
        { spec: BTC_OFF, periodMs: 1000, lastPoll: ok(T0 + 10, 10) },
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
      [{ spec: BTC_OFF, periodMs: 1000, lastPoll: null }],
      [view(T0 + 300)],
      T0,
    );
    expect(report?.ageMs).toBe(-300);
  });
});
