// The silence dialog's logic: matchers prefilled from an alert, the draft checked and turned into a POST body (pure).
import type { AlertPayload, NewSilence, Silence, SilenceMatcher } from "./types.js";

/** Matcher operators as amtool and Alertmanager's UI write them. */
export type Operator = "=" | "!=" | "=~" | "!~";
/** The operators, in the order the dialog offers them. */
export const OPERATORS: readonly Operator[] = ["=", "!=", "=~", "!~"];

/** One matcher row of the form, as typed. */
export interface MatcherDraft {
  readonly name: string;
  readonly operator: Operator;
  readonly value: string;
}

/** The form as typed. */
export interface SilenceDraft {
  readonly matchers: readonly MatcherDraft[];
  /** "2h", "30m", "1d", "1h30m". */
  readonly duration: string;
  readonly createdBy: string;
  readonly comment: string;
}

/** A field the form flags, with what is wrong. */
export interface Problem {
  /** "matchers.0.name", "matchers.1.value", "matchers", "duration", "createdBy", "comment". */
  readonly field: string;
  readonly message: string;
}

/** Durations offered next to the free field. */
export const DURATION_CHOICES: readonly string[] = ["30m", "1h", "2h", "4h", "8h", "1d", "7d"];
/** The duration a new silence starts with. */
export const DEFAULT_DURATION = "2h";
/** The longest silence the form creates: a year (longer is a config change, not a silence). */
const MAX_DURATION_MS = 366 * 24 * 3_600_000;

const UNIT_MS: Readonly<Record<string, number>> = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** A duration in Alertmanager's style ("1h30m", "2d", "45m", "90s") in ms; null when it is not one or is zero. */
export function parseDuration(text: string): number | null {
  const trimmed = text.trim().toLowerCase();
  if (!/^(\d+[wdhms])+$/.test(trimmed)) return null;
  let total = 0;
  for (const [, count = "0", unit = "s"] of trimmed.matchAll(/(\d+)([wdhms])/g))
    total += Number(count) * (UNIT_MS[unit] ?? 0);
  return total > 0 && Number.isSafeInteger(total) ? total : null;
}

/** The operator of a matcher. */
export function operatorOf(matcher: Pick<SilenceMatcher, "isEqual" | "isRegex">): Operator {
  if (matcher.isRegex) return matcher.isEqual ? "=~" : "!~";
  return matcher.isEqual ? "=" : "!=";
}

/** A matcher from a row of the form. */
export function matcherOf(draft: MatcherDraft): SilenceMatcher {
  return {
    name: draft.name.trim(),
    value: draft.value,
    isRegex: draft.operator.endsWith("~"),
    isEqual: !draft.operator.startsWith("!"),
  };
}

/** A matcher as text: `pair="BTC/USD"`, `rule=~"price_.*"`. */
export function matcherText(matcher: SilenceMatcher): string {
  return `${matcher.name}${operatorOf(matcher)}${JSON.stringify(matcher.value)}`;
}

/** Label names a matcher can use on `alert`: its labels plus `rule` and `severity` (and Alertmanager's `alertname`). */
export function matchableNames(alert: Pick<AlertPayload, "labels">): string[] {
  return [...new Set([...Object.keys(alert.labels), "rule", "severity", "alertname"])].sort();
}

/** The draft for silencing `alert`: `rule` and each of its labels as an equality matcher (editable), 2 h. */
export function draftFromAlert(
  alert: Pick<AlertPayload, "labels" | "rule">,
  createdBy: string,
): SilenceDraft {
  const labels = Object.keys(alert.labels)
    .sort()
    .map((name) => ({ name, operator: "=" as const, value: alert.labels[name] ?? "" }));
  return {
    matchers: [{ name: "rule", operator: "=", value: alert.rule }, ...labels],
    duration: DEFAULT_DURATION,
    createdBy,
    comment: "",
  };
}

/** The problems of one matcher row (index `i`). */
function matcherProblems(draft: MatcherDraft, i: number): Problem[] {
  const problems: Problem[] = [];
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(draft.name.trim()))
    problems.push({
      field: `matchers.${i}.name`,
      message: "a label name: letters, digits and _, not starting with a digit",
    });
  if (draft.operator.endsWith("~"))
    try {
      new RegExp(`^(?:${draft.value})$`, "u");
    } catch {
      problems.push({ field: `matchers.${i}.value`, message: "not a valid regular expression" });
    }
  return problems;
}

/** Whether a matcher holds for a label that is absent (Alertmanager reads it as ""). */
function matchesEmpty(matcher: SilenceMatcher): boolean {
  let same: boolean;
  try {
    same = matcher.isRegex ? new RegExp(`^(?:${matcher.value})$`, "u").test("") : matcher.value === "";
  } catch {
    return false;
  }
  return same === matcher.isEqual;
}

/** Check the draft; with no problem, the POST body of a silence from `nowMs` for the draft's duration. */
export function silenceFromDraft(
  draft: SilenceDraft,
  nowMs: number,
):
  | { readonly ok: true; readonly silence: NewSilence }
  | { readonly ok: false; readonly problems: readonly Problem[] } {
  const problems = draft.matchers.flatMap(matcherProblems);
  const matchers = draft.matchers.map(matcherOf);
  if (matchers.length === 0) problems.push({ field: "matchers", message: "add at least one matcher" });
  else if (problems.length === 0 && matchers.every(matchesEmpty))
    problems.push({
      field: "matchers",
      message: "at least one matcher must not match an empty label (it would silence every alert)",
    });
  const durationMs = parseDuration(draft.duration);
  if (durationMs === null)
    problems.push({ field: "duration", message: 'a duration such as "2h", "30m", "1d" or "1h30m"' });
  else if (durationMs > MAX_DURATION_MS) problems.push({ field: "duration", message: "at most a year" });
  if (draft.createdBy.trim() === "") problems.push({ field: "createdBy", message: "say who silences it" });
  if (draft.comment.trim() === "") problems.push({ field: "comment", message: "say why it is silenced" });
  if (problems.length > 0 || durationMs === null) return { ok: false, problems };
  return {
    ok: true,
    silence: {
      matchers,
      startsAt: new Date(nowMs).toISOString(),
      endsAt: new Date(nowMs + durationMs).toISOString(),
      createdBy: draft.createdBy.trim(),
      comment: draft.comment.trim(),
    },
  };
}

/** Whether the page may expire a silence: not a maintenance window from the config, not already expired. */
export function canExpire(silence: Pick<Silence, "id" | "status">): boolean {
  return !silence.id.startsWith("maintenance:") && silence.status.state !== "expired";
}

/** Silences in the order the list shows them: active, then pending, then expired; newest end first within each. */
export function sortSilences(silences: readonly Silence[]): Silence[] {
  const rank = { active: 0, pending: 1, expired: 2 } as const;
  return [...silences].sort(
    (a, b) => rank[a.status.state] - rank[b.status.state] || Date.parse(b.endsAt) - Date.parse(a.endsAt),
  );
}
