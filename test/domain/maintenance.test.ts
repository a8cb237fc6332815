// Maintenance windows as silences: weekly and cron schedules in a time zone, across midnight and DST changes.
import { describe, expect, it } from "vitest";
import {
  createMaintenanceCalendar,
  isMaintenanceSilenceId,
  maintenanceOccurrence,
  maintenanceScheduleProblem,
  maintenanceSilences,
  nextMaintenanceChangeMs,
  isTimeZone,
  type MaintenanceWindow,
  type WeeklySchedule,
} from "../../src/domain/maintenance.js";
import { silenceState, silencingIds, type SilenceMatcher } from "../../src/domain/silence.js";

const BTC: readonly SilenceMatcher[] = [{ name: "pair", value: "BTC/USD", isRegex: false, isEqual: true }];
const ms = (iso: string): number => Date.parse(iso);
const iso = (atMs: number): string => new Date(atMs).toISOString();

const weekly = (schedule: WeeklySchedule, timeZone = "UTC"): MaintenanceWindow => ({
  name: "w",
  matchers: BTC,
  comment: "db upgrade",
  timeZone,
  weekly: schedule,
});
const cron = (expression: string, durationMs: number, timeZone = "UTC"): MaintenanceWindow => ({
  name: "c",
  matchers: BTC,
  comment: "nightly",
  timeZone,
  cron: expression,
  durationMs,
});
const EVERY_DAY = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;

/** The occurrence as ISO times, so a failure reads as dates. */
const occurrenceAt = (window: MaintenanceWindow, now: string): readonly [string, string] | null => {
  const occurrence = maintenanceOccurrence(window, ms(now));
  return occurrence === null ? null : [iso(occurrence.startMs), iso(occurrence.endMs)];
};

// 2026-01-05 is a Monday; Europe/Paris changes to CEST on 2026-03-29 at 02:00 and back to CET on 2026-10-25 at 03:00.
describe("weekly windows", () => {
  const monday = weekly({ days: ["mon"], start: "02:00", end: "03:30" });
  it.each([
    ["inside", monday, "2026-01-05T02:30:00Z", ["2026-01-05T02:00:00.000Z", "2026-01-05T03:30:00.000Z"]],
    [
      "at its start",
      monday,
      "2026-01-05T02:00:00Z",
      ["2026-01-05T02:00:00.000Z", "2026-01-05T03:30:00.000Z"],
    ],
    [
      "just before",
      monday,
      "2026-01-05T01:59:59.999Z",
      ["2026-01-05T02:00:00.000Z", "2026-01-05T03:30:00.000Z"],
    ],
    [
      "at its end: the next week's",
      monday,
      "2026-01-05T03:30:00Z",
      ["2026-01-12T02:00:00.000Z", "2026-01-12T03:30:00.000Z"],
    ],
    [
      "on another day",
      monday,
      "2026-01-08T12:00:00Z",
      ["2026-01-12T02:00:00.000Z", "2026-01-12T03:30:00.000Z"],
    ],
    [
      "crossing midnight, after it",
      weekly({ days: ["fri"], start: "22:00", end: "02:00" }),
      "2026-01-10T01:00:00Z",
      ["2026-01-09T22:00:00.000Z", "2026-01-10T02:00:00.000Z"],
    ],
    [
      "crossing midnight from Sunday into Monday",
      weekly({ days: ["sun"], start: "23:00", end: "01:00" }),
      "2026-01-05T00:30:00Z",
      ["2026-01-04T23:00:00.000Z", "2026-01-05T01:00:00.000Z"],
    ],
    [
      "crossing midnight, its end reached",
      weekly({ days: ["fri"], start: "22:00", end: "02:00" }),
      "2026-01-10T02:00:00Z",
      ["2026-01-16T22:00:00.000Z", "2026-01-17T02:00:00.000Z"],
    ],
    [
      "a list of weekdays, in winter Paris time",
      weekly({ days: ["mon", "wed", "fri"], start: "09:00", end: "17:00" }, "Europe/Paris"),
      "2026-01-06T12:00:00Z",
      ["2026-01-07T08:00:00.000Z", "2026-01-07T16:00:00.000Z"],
    ],
    [
      "every day, almost 24 h, crossing midnight",
      weekly({ days: EVERY_DAY, start: "02:00", end: "01:59" }),
      "2026-01-06T01:30:00Z",
      ["2026-01-05T02:00:00.000Z", "2026-01-06T01:59:00.000Z"],
    ],
  ])("%s", (_name, window, now, expected) => {
    expect(occurrenceAt(window, now)).toEqual(expected);
  });
});

describe("weekly windows across DST changes (Europe/Paris, wall-clock ends)", () => {
  const paris = (schedule: WeeklySchedule) => weekly(schedule, "Europe/Paris");
  it.each([
    [
      "spring: 01:30-03:30 lasts one hour",
      paris({ days: ["sun"], start: "01:30", end: "03:30" }),
      "2026-03-29T01:00:00Z",
      ["2026-03-29T00:30:00.000Z", "2026-03-29T01:30:00.000Z"],
    ],
    [
      "spring: a start in the skipped hour begins when the clock reaches it (03:00 CEST)",
      paris({ days: ["sun"], start: "02:30", end: "04:00" }),
      "2026-03-29T00:00:00Z",
      ["2026-03-29T01:00:00.000Z", "2026-03-29T02:00:00.000Z"],
    ],
    [
      "spring: a window wholly in the skipped hour does not happen that day",
      paris({ days: ["sun"], start: "02:00", end: "02:30" }),
      "2026-03-29T00:30:00Z",
      ["2026-04-05T00:00:00.000Z", "2026-04-05T00:30:00.000Z"],
    ],
    [
      "spring: a daily window the day after is on CEST",
      paris({ days: EVERY_DAY, start: "02:00", end: "03:00" }),
      "2026-03-29T12:00:00Z",
      ["2026-03-30T00:00:00.000Z", "2026-03-30T01:00:00.000Z"],
    ],
    [
      "autumn: 01:00-04:00 lasts four hours",
      paris({ days: ["sun"], start: "01:00", end: "04:00" }),
      "2026-10-25T01:00:00Z",
      ["2026-10-24T23:00:00.000Z", "2026-10-25T03:00:00.000Z"],
    ],
    [
      "autumn: a start in the repeated hour begins at its first occurrence",
      paris({ days: ["sun"], start: "02:30", end: "03:00" }),
      "2026-10-25T00:00:00Z",
      ["2026-10-25T00:30:00.000Z", "2026-10-25T02:00:00.000Z"],
    ],
    [
      "autumn: crossing midnight into the change",
      paris({ days: ["sat"], start: "23:00", end: "03:30" }),
      "2026-10-25T02:00:00Z",
      ["2026-10-24T21:00:00.000Z", "2026-10-25T02:30:00.000Z"],
    ],
  ])("%s", (_name, window, now, expected) => {
    expect(occurrenceAt(window, now)).toEqual(expected);
  });
});

describe("cron windows with a duration", () => {
  const HOUR_MS = 3_600_000;
  it.each([
    [
      "weekdays at 02:00 for 90 min, on a Saturday: Monday's",
      cron("0 2 * * 1-5", 1.5 * HOUR_MS),
      "2026-01-10T12:00:00Z",
      ["2026-01-12T02:00:00.000Z", "2026-01-12T03:30:00.000Z"],
    ],
    [
      "weekdays at 02:00 for 90 min, inside Tuesday's",
      cron("0 2 * * 1-5", 1.5 * HOUR_MS),
      "2026-01-06T03:00:00Z",
      ["2026-01-06T02:00:00.000Z", "2026-01-06T03:30:00.000Z"],
    ],
    [
      "crossing midnight by its duration",
      cron("0 23 * * *", 3 * HOUR_MS),
      "2026-01-06T01:00:00Z",
      ["2026-01-05T23:00:00.000Z", "2026-01-06T02:00:00.000Z"],
    ],
    [
      "a start in Paris's skipped hour runs at 03:00 CEST; the duration is elapsed time",
      cron("30 2 * * *", HOUR_MS, "Europe/Paris"),
      "2026-03-29T00:00:00Z",
      ["2026-03-29T01:00:00.000Z", "2026-03-29T02:00:00.000Z"],
    ],
    [
      "Paris's repeated hour starts once",
      cron("30 2 * * *", HOUR_MS, "Europe/Paris"),
      "2026-10-25T01:45:00Z",
      ["2026-10-26T01:30:00.000Z", "2026-10-26T02:30:00.000Z"],
    ],
    [
      "the first Sunday of the month (croner's # extension)",
      cron("0 4 * * 0#1", 2 * HOUR_MS),
      "2026-01-10T00:00:00Z",
      ["2026-02-01T04:00:00.000Z", "2026-02-01T06:00:00.000Z"],
    ],
    [
      "back-to-back occurrences are one silence, not one per start",
      cron("0 0,6,12,18 * * *", 6 * HOUR_MS),
      "2026-01-05T07:00:00Z",
      ["2026-01-05T06:00:00.000Z", "2026-01-21T12:00:00.000Z"], // 64 more starts merged, then recomputed
    ],
    [
      "a daily hour is not merged with the next day's",
      cron("0 2 * * *", HOUR_MS),
      "2026-01-05T02:30:00Z",
      ["2026-01-05T02:00:00.000Z", "2026-01-05T03:00:00.000Z"],
    ],
  ])("%s", (_name, window, now, expected) => {
    expect(occurrenceAt(window, now)).toEqual(expected);
  });

  it("a date that never comes has no occurrence", () => {
    expect(maintenanceOccurrence(cron("0 0 30 2 *", HOUR_MS), ms("2026-01-01T00:00:00Z"))).toBeNull();
  });
});

describe("maintenanceSilences", () => {
  const windows: MaintenanceWindow[] = [
    { ...weekly({ days: ["mon"], start: "02:00", end: "03:30" }), name: "db" },
    { ...cron("0 12 * * *", 60_000), name: "noon", matchers: [{ ...BTC[0]!, value: "ETH/USD" }] },
    { ...cron("0 0 30 2 *", 60_000), name: "never" },
  ];
  const now = ms("2026-01-05T02:10:00Z");

  it("gives each window the silence it is now: active during an occurrence, else pending", () => {
    const silences = maintenanceSilences(windows, now);
    expect(silences).toEqual([
      {
        id: "maintenance:db",
        matchers: BTC,
        startsAt: "2026-01-05T02:00:00.000Z",
        endsAt: "2026-01-05T03:30:00.000Z",
        createdBy: "config",
        comment: "db upgrade",
        updatedAt: "2026-01-05T02:00:00.000Z",
      },
      expect.objectContaining({
        id: "maintenance:noon",
        startsAt: "2026-01-05T12:00:00.000Z",
        endsAt: "2026-01-05T12:01:00.000Z",
      }),
    ]);
    expect(silences.map((silence) => silenceState(silence, now))).toEqual(["active", "pending"]);
    expect(silences.every((silence) => isMaintenanceSilenceId(silence.id))).toBe(true);
    expect(isMaintenanceSilenceId("3f1c-uuid")).toBe(false);
  });

  it("mutes a matching alert exactly while the window is active", () => {
    const alert = { labels: { pair: "BTC/USD" }, rule: "price_change", severity: "warning" } as const;
    const mutedAt = (at: string) => silencingIds(maintenanceSilences(windows, ms(at)), alert, ms(at));
    expect(mutedAt("2026-01-05T02:10:00Z")).toEqual(["maintenance:db"]);
    expect(mutedAt("2026-01-05T03:30:00Z")).toEqual([]);
    expect(mutedAt("2026-01-12T02:00:00Z")).toEqual(["maintenance:db"]);
  });

  it("says when the silences next change: the earliest start or end of any window", () => {
    expect(iso(nextMaintenanceChangeMs(windows, now)!)).toBe("2026-01-05T03:30:00.000Z");
    expect(iso(nextMaintenanceChangeMs(windows, ms("2026-01-05T03:30:00Z"))!)).toBe(
      "2026-01-05T12:00:00.000Z",
    );
    expect(nextMaintenanceChangeMs([], now)).toBeNull();
    expect(nextMaintenanceChangeMs([windows[2]!], now)).toBeNull();
  });
});

describe("createMaintenanceCalendar", () => {
  const windows: MaintenanceWindow[] = [
    { ...weekly({ days: ["mon", "fri"], start: "22:00", end: "02:00" }, "Europe/Paris"), name: "a" },
    { ...cron("*/20 9-17 * * 1-5", 5 * 60_000, "America/New_York"), name: "b" },
  ];

  it("answers as maintenanceSilences does at every time, forwards and back, while caching between changes", () => {
    const calendar = createMaintenanceCalendar(windows);
    const start = ms("2026-01-04T00:00:00Z");
    const times = Array.from({ length: 400 }, (_, i) => start + i * 7 * 60_000 + (i % 3) * 1_000);
    for (const now of [...times, ...times.slice(0, 50).reverse()]) {
      expect(calendar.silencesAt(now)).toEqual(maintenanceSilences(windows, now));
      expect(calendar.nextChangeMs(now)).toBe(nextMaintenanceChangeMs(windows, now));
    }
  });

  it("hands back the same list until a window starts or ends", () => {
    const calendar = createMaintenanceCalendar(windows);
    const first = calendar.silencesAt(ms("2026-01-05T12:00:00Z"));
    const changeMs = calendar.nextChangeMs(ms("2026-01-05T12:00:00Z"))!;
    expect(calendar.silencesAt(changeMs - 1)).toBe(first);
    expect(calendar.silencesAt(changeMs)).not.toBe(first);
  });
});

describe("validation", () => {
  it.each([
    ["Europe/Paris", true],
    ["UTC", true],
    ["America/Argentina/Buenos_Aires", true],
    ["Etc/GMT+2", true],
    ["Mars/Olympus", false],
    ["+02:00", false],
    ["", false],
  ])("time zone %j → %j", (zone, known) => {
    expect(isTimeZone(zone)).toBe(known);
  });

  it.each([
    [cron("0 2 * * 1-5", 60_000), null],
    [cron("@daily", 60_000), null],
    [cron("0 0 29 2 *", 60_000), null],
    [cron("61 * * * *", 60_000), { key: "cron", reason: /^not a 5-field cron expression .*minute: 61/ }],
    [cron("0 0 2 * * *", 60_000), { key: "cron", reason: /^not a 5-field cron expression .*5 parts/ }],
    [cron("0 2 * *", 60_000), { key: "cron", reason: /^not a 5-field cron expression/ }],
    [cron("0 0 30 2 *", 60_000), { key: "cron", reason: /never fires/ }],
    [weekly({ days: ["mon"], start: "22:00", end: "02:00" }), null],
    [weekly({ days: ["mon"], start: "02:00", end: "02:00" }), { key: "weekly.end", reason: /must differ/ }],
  ])("%j → %j", (window, problem) => {
    const got = maintenanceScheduleProblem(window);
    if (problem === null) expect(got).toBeNull();
    else expect(got).toEqual({ key: problem.key, reason: expect.stringMatching(problem.reason) as string });
  });
});
