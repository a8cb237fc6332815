// The `maintenance` array: windows load as domain windows; every invalid one is a `maintenance[i].key: reason` (exit 78).
import { describe, expect, it } from "vitest";
import { EX_CONFIG } from "../../src/cli/args.js";
import { runCheckConfig } from "../../src/cli/check-config.js";
import { configurationMarkdown } from "../../src/config/docs.js";
import { packageRoot } from "../../src/config/package-root.js";
import { loadWith, problemLines, writeConfig } from "./helpers.js";

const bare = { env: {}, defaultFile: null } as const;
const WEEKLY = { days: ["sat", "sun"], start: "22:00", end: "02:00" };
const window = (fields: object) => ({
  name: "db-upgrade",
  matchers: ["pair=BTC/USD"],
  comment: "database upgrade",
  weekly: WEEKLY,
  ...fields,
});
const problemsOf = (...windows: object[]) => problemLines(() => loadWith({ maintenance: windows }, bare));

describe("maintenance windows that load", () => {
  it("reads a weekly and a cron window: matchers parsed, timeZone UTC by default", () => {
    const { config } = loadWith(
      {
        maintenance: [
          window({ matchers: ["pair=BTC/USD", 'rule=~"price_.*"', "severity!~info"] }),
          {
            name: "nightly",
            matchers: ["market=onchain"],
            comment: "node restarts",
            cron: "30 3 * * 1-5",
            durationMs: 900_000,
            timeZone: "Europe/Paris",
          },
        ],
      },
      bare,
    );
    expect(config.maintenance).toEqual([
      {
        name: "db-upgrade",
        matchers: [
          { name: "pair", value: "BTC/USD", isRegex: false, isEqual: true },
          { name: "rule", value: "price_.*", isRegex: true, isEqual: true },
          { name: "severity", value: "info", isRegex: true, isEqual: false },
        ],
        comment: "database upgrade",
        timeZone: "UTC",
        weekly: WEEKLY,
      },
      {
        name: "nightly",
        matchers: [{ name: "market", value: "onchain", isRegex: false, isEqual: true }],
        comment: "node restarts",
        timeZone: "Europe/Paris",
        cron: "30 3 * * 1-5",
        durationMs: 900_000,
      },
    ]);
  });

  it("loads the example of docs/configuration.md", () => {
    const section = configurationMarkdown().split("## Maintenance windows")[1]!;
    const example = /```json\n([\s\S]*?)```/.exec(section)![1]!;
    const { config } = loadWith(JSON.parse(`{${example}}`), bare);
    expect(config.maintenance.map((w) => w.name)).toEqual(["weekend-db-upgrade", "nightly-node-restart"]);
  });

  it("is empty unless configured, and is set from PM_MAINTENANCE as JSON", () => {
    expect(loadWith({}, bare).config.maintenance).toEqual([]);
    const env = { PM_MAINTENANCE: JSON.stringify([window({})]) };
    expect(loadWith({}, { ...bare, env }).config.maintenance.map((w) => w.name)).toEqual(["db-upgrade"]);
  });
});

describe("check-config shows each window's occurrence, so its schedule can be checked", () => {
  it("prints the occurrence active now or next on the window's wall clock and in UTC", () => {
    let stderr = "";
    const file = writeConfig({
      maintenance: [
        window({ timeZone: "Europe/Paris", matchers: ["pair=BTC/USD", "rule=~price_.*"] }),
        { ...window({ name: "nightly", weekly: undefined }), cron: "30 3 * * 1-5", durationMs: 900_000 },
      ],
    });
    const code = runCheckConfig(["--config", file], {
      stdout: () => undefined,
      stderr: (text) => (stderr += text),
      env: {},
      cwd: packageRoot(),
      nowMs: () => Date.parse("2026-01-10T21:30:00Z"), // a Saturday, 22:30 in Paris
    });
    expect(code).toBe(0);
    expect(stderr.split("\n").filter((line) => line.startsWith("maintenance:"))).toEqual([
      'maintenance: db-upgrade active 2026-01-10 22:00 → 2026-01-11 02:00 Europe/Paris (2026-01-10T21:00:00.000Z → 2026-01-11T01:00:00.000Z) {pair="BTC/USD", rule=~"price_.*"}',
      'maintenance: nightly pending 2026-01-12 03:30 → 2026-01-12 03:45 UTC (2026-01-12T03:30:00.000Z → 2026-01-12T03:45:00.000Z) {pair="BTC/USD"}',
    ]);
  });
});

describe("maintenance windows refused, each problem as key: reason", () => {
  it.each([
    [window({ timeZone: "Mars/Olympus" }), 'maintenance[0].timeZone: unknown time zone "Mars/Olympus"'],
    [window({ timeZone: "+02:00" }), "maintenance[0].timeZone: unknown time zone"],
    [
      window({ weekly: undefined, cron: "61 2 * * *", durationMs: 60_000 }),
      "maintenance[0].cron: not a 5-field cron expression (minute hour day month weekday): Invalid value for minute: 61",
    ],
    [
      window({ weekly: undefined, cron: "0 0 2 * * *", durationMs: 60_000 }),
      "maintenance[0].cron: not a 5-field cron expression",
    ],
    [
      window({ weekly: undefined, cron: "0 0 30 2 *", durationMs: 60_000 }),
      'maintenance[0].cron: "0 0 30 2 *" never fires (no such date)',
    ],
    [
      window({ weekly: undefined, cron: "0 2 * * *" }),
      "maintenance[0].durationMs: required with cron (how long each occurrence lasts)",
    ],
    [
      window({ weekly: undefined, cron: "0 2 * * *", durationMs: 1_000 }),
      "maintenance[0].durationMs: must be an integer from 60000 to 2678400000, got 1000",
    ],
    [window({ cron: "0 2 * * *", durationMs: 60_000 }), "maintenance[0].cron: set weekly or cron, not both"],
    [window({ durationMs: 60_000 }), "maintenance[0].durationMs: only with cron"],
    [window({ weekly: undefined }), "maintenance[0].weekly: a schedule is required"],
    [
      window({ weekly: { ...WEEKLY, days: ["sat", "sunday"] } }),
      'maintenance[0].weekly.days[1]: must be one of mon, tue, wed, thu, fri, sat, sun, got "sunday"',
    ],
    [window({ weekly: { ...WEEKLY, days: [] } }), "maintenance[0].weekly.days: at least one day is required"],
    [
      window({ weekly: { ...WEEKLY, start: "24:00" } }),
      'maintenance[0].weekly.start: must be a time of day HH:MM (00:00 to 23:59), got "24:00"',
    ],
    [window({ weekly: { ...WEEKLY, end: "22:00" } }), "maintenance[0].weekly.end: must differ from start"],
    [window({ weekly: { ...WEEKLY, from: "22:00" } }), "maintenance[0].weekly.from: unknown key"],
    [window({ timezone: "UTC" }), "maintenance[0].timezone: unknown key (did you mean timeZone?)"],
    [window({ matchers: [] }), "maintenance[0].matchers: at least one matcher is required"],
    [
      window({ matchers: ['pair="BTC/USD'] }),
      'maintenance[0].matchers[0]: "pair="BTC/USD": the quoted value is not a valid JSON string',
    ],
    [window({ matchers: ["BTC/USD"] }), 'maintenance[0].matchers[0]: "BTC/USD" is not a matcher'],
    [
      window({ matchers: ["rule=~price_(("] }),
      'maintenance[0].matchers[0]: "rule=~price_((": not a valid regular expression',
    ],
    [
      window({ matchers: ["pair=~.*", "rule!=x"] }),
      "maintenance[0].matchers: at least one matcher must not match the empty string (it would silence every alert)",
    ],
    [
      window({ name: "db upgrade" }),
      'maintenance[0].name: must be a name (letters, digits, _ - .), got "db upgrade"',
    ],
    [window({ comment: " " }), 'maintenance[0].comment: must be a non-empty comment, got " "'],
    [window({ comment: undefined }), "maintenance[0].comment: required"],
  ])("%j → %s", (content, line) => {
    const problems = problemsOf(content);
    expect(
      problems.find((problem) => problem.startsWith(line)),
      problems.join("\n"),
    ).toBeDefined();
  });

  it("refuses two windows with one name", () => {
    expect(problemsOf(window({}), window({}))).toEqual([
      'maintenance[1].name: duplicate name "db-upgrade" (also maintenance[0]); give each window a distinct name',
    ]);
  });

  it("reports every problem of a window at once", () => {
    expect(problemsOf(window({ timeZone: "Nowhere", weekly: undefined, matchers: ["pair=~.*"] }))).toEqual([
      "maintenance[0].matchers: at least one matcher must not match the empty string (it would silence every alert)",
      'maintenance[0].timeZone: unknown time zone "Nowhere" (an IANA name such as Europe/Paris)',
      "maintenance[0].weekly: a schedule is required: weekly {days, start, end}, or cron with durationMs",
    ]);
  });

  it("makes check-config exit 78 naming the key", () => {
    let stderr = "";
    const file = writeConfig({ maintenance: [window({ timeZone: "Mars/Olympus" })] });
    const code = runCheckConfig(["--config", file], {
      stdout: () => undefined,
      stderr: (text) => (stderr += text),
      env: {},
      cwd: packageRoot(),
    });
    expect(code).toBe(EX_CONFIG);
    expect(stderr).toContain('  maintenance[0].timeZone: unknown time zone "Mars/Olympus"');
  });
});
