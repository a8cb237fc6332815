// The `maintenance` array: named recurring silences (weekly or cron + duration, in a time zone) with amtool matchers.
import { z } from "zod";
import {
  WEEKDAYS,
  isTimeZone,
  maintenanceScheduleProblem,
  type MaintenanceWindow,
} from "../domain/maintenance.js";
import { matchersProblem, parseMatcher, type SilenceMatcher } from "../domain/silence.js";
import { ID_PATTERN } from "./checks.js";
import { parseArray, parseAt, reportDuplicates } from "./elements.js";
import { element, int, list, listItem, optionalElement, text } from "./fields.js";
import type { ConfigProblem } from "./problems.js";

const TIME_OF_DAY = /^([01]\d|2[0-3]):[0-5]\d$/;
const DAY_MS = 86_400_000;

/** A matcher's parse problem, or undefined when it is one. */
function matcherTextProblem(text: string): string | undefined {
  const parsed = parseMatcher(text);
  return "problem" in parsed ? parsed.problem : undefined;
}

/** Keys of `weekly`. */
export const WEEKLY_SHAPE = {
  days: list(
    z.enum(WEEKDAYS, {
      error: (issue) => `must be one of ${WEEKDAYS.join(", ")}, got ${JSON.stringify(issue.input)}`,
    }),
    {
      doc: `Days the window starts on: ${WEEKDAYS.join(", ")}.`,
      required: { emptyReason: "at least one day is required" },
    },
  ),
  start: text({
    doc: "Start, HH:MM on the wall clock of timeZone. A start the clock skips (DST) begins when it reaches the next valid time.",
    pattern: TIME_OF_DAY,
    expected: "a time of day HH:MM (00:00 to 23:59)",
  }),
  end: text({
    doc: "End, HH:MM on the same wall clock; an end before the start is on the next day (22:00 to 02:00 crosses midnight).",
    pattern: TIME_OF_DAY,
    expected: "a time of day HH:MM (00:00 to 23:59)",
  }),
};

/** Keys of one `maintenance[]` element, in documentation order. */
export const MAINTENANCE_SHAPE = {
  name: text({
    doc: "Unique window name; its silence id is maintenance:<name>.",
    pattern: ID_PATTERN,
    expected: "a name (letters, digits, _ - .)",
  }),
  matchers: list(listItem(matcherTextProblem), {
    doc: 'Alerts the window silences, as amtool matchers: "pair=BTC/USD", "rule=~price_.*", "severity!=critical" (labels, plus rule and severity). At least one must not match the empty string.',
    required: { emptyReason: "at least one matcher is required" },
  }),
  comment: text({
    doc: "Why the window exists (shown as the silence's comment).",
    pattern: /\S/,
    expected: "a non-empty comment",
  }),
  weekly: optionalElement(WEEKLY_SHAPE, {
    doc: 'Weekly schedule {days, start, end}, e.g. {"days":["sat","sun"],"start":"22:00","end":"02:00"}; or set cron.',
  }),
  cron: text({
    doc: 'Or: a 5-field cron expression (minute hour day-of-month month day-of-week, read in timeZone) for the starts, e.g. "0 2 * * 1-5"; needs durationMs.',
    pattern: /\S/,
    expected: "a cron expression",
    optional: true,
  }),
  durationMs: int({
    doc: "With cron: how long each occurrence lasts (ms, elapsed time).",
    min: 60_000,
    max: 31 * DAY_MS,
    optional: true,
  }),
  timeZone: text({
    doc: "IANA time zone of the schedule's times, e.g. Europe/Paris.",
    pattern: /\S/,
    expected: "an IANA time zone name",
    default: "UTC",
  }),
};

type WindowInput = z.output<z.ZodObject<typeof MAINTENANCE_SHAPE>>;

/** Parse matchers that listItem already checked. */
function parsedMatchers(texts: readonly string[]): SilenceMatcher[] {
  return texts.map((matcherText) => {
    const parsed = parseMatcher(matcherText);
    if ("problem" in parsed) throw new Error(`unreachable: ${parsed.problem}`);
    return parsed;
  });
}

/** The window a valid element describes, or the problems (`key` relative to the element) that keep it from being one. */
function toWindow(
  input: WindowInput,
): MaintenanceWindow | { readonly problems: ReadonlyArray<{ key: string; reason: string }> } {
  const problems: Array<{ key: string; reason: string }> = [];
  const { weekly, cron, durationMs, ...common } = input;
  const base = { ...common, matchers: parsedMatchers(input.matchers) };
  const matchers = matchersProblem(base.matchers);
  if (matchers !== null) problems.push({ key: "matchers", reason: matchers.replace(/^matchers: /, "") });
  if (!isTimeZone(input.timeZone))
    problems.push({
      key: "timeZone",
      reason: `unknown time zone ${JSON.stringify(input.timeZone)} (an IANA name such as Europe/Paris)`,
    });
  if (weekly !== undefined && cron !== undefined)
    problems.push({ key: "cron", reason: "set weekly or cron, not both (one schedule per window)" });
  else if (weekly === undefined && cron === undefined)
    problems.push({
      key: "weekly",
      reason: "a schedule is required: weekly {days, start, end}, or cron with durationMs",
    });
  if (cron !== undefined && durationMs === undefined)
    problems.push({ key: "durationMs", reason: "required with cron (how long each occurrence lasts)" });
  if (weekly !== undefined && durationMs !== undefined)
    problems.push({ key: "durationMs", reason: "only with cron (a weekly window ends at its end time)" });
  if (problems.length > 0) return { problems };
  const window: MaintenanceWindow =
    weekly !== undefined ? { ...base, weekly } : { ...base, cron: cron ?? "", durationMs: durationMs ?? 0 };
  const schedule = maintenanceScheduleProblem(window);
  return schedule === null ? window : { problems: [schedule] };
}

/** `maintenance[]`: strict keys, then the window's own rules (one schedule, a known zone, a cron that fires). */
const MAINTENANCE_ELEMENT: z.ZodType<MaintenanceWindow> = element(MAINTENANCE_SHAPE).transform(
  (input, ctx) => {
    const window = toWindow(input);
    if (!("problems" in window)) return window;
    for (const { key, reason } of window.problems)
      ctx.addIssue({ code: "custom", path: key.split("."), message: reason });
    return z.NEVER;
  },
);

/** Read the `maintenance` array (raw JSON from the merged layers): valid windows; problems for the rest. */
export function readMaintenance(raw: unknown, problems: ConfigProblem[]): MaintenanceWindow[] {
  const items = parseArray(raw, "maintenance", problems, (item, key) =>
    parseAt(MAINTENANCE_ELEMENT, item, key, problems),
  );
  return reportDuplicates(
    items,
    "maintenance",
    problems,
    (window) => window.name,
    ".name",
    (name, first) => `duplicate name "${name}" (also ${first}); give each window a distinct name`,
  );
}
