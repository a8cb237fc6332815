// Silences with Alertmanager's semantics: label matchers (=, !=, =~, !~), a time range, and which alerts they mute.
import type { AlertPayload } from "./events.js";

/** The empty id list, shared (most alerts are muted by nothing). */
const NO_IDS: readonly string[] = Object.freeze([]);

/** One label matcher in Alertmanager's API v2 form: `isEqual` false negates, `isRegex` makes `value` an anchored regex. */
export interface SilenceMatcher {
  readonly name: string;
  readonly value: string;
  readonly isRegex: boolean;
  readonly isEqual: boolean;
}

/** A silence as stored and served (Alertmanager's `gettableSilence` less the computed `status`). */
export interface Silence {
  readonly id: string;
  readonly matchers: readonly SilenceMatcher[];
  /** ISO times; a silence mutes in [startsAt, endsAt). */
  readonly startsAt: string;
  readonly endsAt: string;
  readonly createdBy: string;
  readonly comment: string;
  /** Last change (creation or early expiry), ISO. */
  readonly updatedAt: string;
}

/** Alertmanager's silence states. */
export type SilenceState = "pending" | "active" | "expired";

/** The state of `silence` at `nowMs`. */
export function silenceState(silence: Pick<Silence, "startsAt" | "endsAt">, nowMs: number): SilenceState {
  if (nowMs >= Date.parse(silence.endsAt)) return "expired";
  if (nowMs < Date.parse(silence.startsAt)) return "pending";
  return "active";
}

/** The labels a matcher sees on an alert: its labels plus `rule` and `severity` (and `alertname`, Alertmanager's name for the rule). */
export function matchableLabels(
  alert: Pick<AlertPayload, "labels" | "rule" | "severity">,
): Readonly<Record<string, string>> {
  return { alertname: alert.rule, ...alert.labels, rule: alert.rule, severity: alert.severity };
}

/** Compile a matcher's regex as Alertmanager does: anchored at both ends. Throws SyntaxError on a bad pattern. */
export function compileMatcherRegex(value: string): RegExp {
  return new RegExp(`^(?:${value})$`, "u");
}

/** Whether one matcher holds for `labels` (an absent label is the empty string, as in Alertmanager). */
export function matcherMatches(matcher: SilenceMatcher, labels: Readonly<Record<string, string>>): boolean {
  const actual = labels[matcher.name] ?? "";
  const same = matcher.isRegex ? compileMatcherRegex(matcher.value).test(actual) : actual === matcher.value;
  return same === matcher.isEqual;
}

/** Whether every matcher of `silence` holds for `labels`. */
export function silenceMatches(
  silence: Pick<Silence, "matchers">,
  labels: Readonly<Record<string, string>>,
): boolean {
  return silence.matchers.every((matcher) => matcherMatches(matcher, labels));
}

/** Ids of the silences active at `nowMs` that mute `alert`, sorted (empty when none). */
export function silencingIds(
  silences: readonly Silence[],
  alert: Pick<AlertPayload, "labels" | "rule" | "severity">,
  nowMs: number,
): readonly string[] {
  if (silences.length === 0) return NO_IDS;
  let labels: Readonly<Record<string, string>> | undefined;
  const ids: string[] = [];
  for (const silence of silences) {
    if (silenceState(silence, nowMs) !== "active") continue;
    labels ??= matchableLabels(alert);
    if (silenceMatches(silence, labels)) ids.push(silence.id);
  }
  return ids.length === 0 ? NO_IDS : ids.sort();
}

/** The earliest start or end of any silence after `nowMs` (when muting can next change), or null. */
export function nextSilenceChangeMs(silences: readonly Silence[], nowMs: number): number | null {
  let next: number | null = null;
  for (const silence of silences)
    for (const atMs of [Date.parse(silence.startsAt), Date.parse(silence.endsAt)])
      if (atMs > nowMs && (next === null || atMs < next)) next = atMs;
  return next;
}

/**
 * Why a silence's matchers cannot be used, as `matchers…: reason`, or null: at least one, named, valid regexes, and
 * one that does not match the empty string (silenceProblem's matcher rules, shared with maintenance windows).
 */
export function matchersProblem(matchers: readonly SilenceMatcher[]): string | null {
  if (matchers.length === 0) return "matchers: at least one matcher is required";
  for (const [index, matcher] of matchers.entries()) {
    if (matcher.name === "") return `matchers[${index}].name: must not be empty`;
    if (!matcher.isRegex) continue;
    try {
      compileMatcherRegex(matcher.value);
    } catch (error) {
      return `matchers[${index}].value: not a valid regular expression (${(error as Error).message})`;
    }
  }
  // a silence of only matchers that match the empty label would mute every alert
  if (matchers.every((matcher) => matcherMatches(matcher, {})))
    return "matchers: at least one matcher must not match the empty string (it would silence every alert)";
  return null;
}

/** Why a silence cannot be stored, or null when it can (Alertmanager's rules: matchers, times, one matcher not matching ""). */
export function silenceProblem(silence: Pick<Silence, "matchers" | "startsAt" | "endsAt">): string | null {
  const matchers = matchersProblem(silence.matchers);
  if (matchers !== null) return matchers;
  const startsAtMs = Date.parse(silence.startsAt);
  const endsAtMs = Date.parse(silence.endsAt);
  if (Number.isNaN(startsAtMs)) return "startsAt: not a time";
  if (Number.isNaN(endsAtMs)) return "endsAt: not a time";
  if (endsAtMs < startsAtMs) return "endsAt: must not be before startsAt";
  return null;
}

/** Matchers in Alertmanager's text form, `{pair="BTC/USD", rule=~"price_.*"}` (logs, lifecycle events, the CLI). */
export function formatMatchers(matchers: readonly SilenceMatcher[]): string {
  return `{${matchers.map((matcher) => `${matcher.name}${matcherOperator(matcher)}${JSON.stringify(matcher.value)}`).join(", ")}}`;
}

/** The operator of a matcher: `=`, `!=`, `=~` or `!~`. */
export function matcherOperator(
  matcher: Pick<SilenceMatcher, "isEqual" | "isRegex">,
): "=" | "!=" | "=~" | "!~" {
  if (matcher.isRegex) return matcher.isEqual ? "=~" : "!~";
  return matcher.isEqual ? "=" : "!=";
}

/**
 * Parse one matcher in amtool's text form: `pair=BTC/USD`, `rule!=stale_price`, `pair=~"BTC/.*"`, `severity!~info`
 * (the value may be double-quoted JSON). Returns the matcher or a reason it is not one.
 */
export function parseMatcher(text: string): SilenceMatcher | { readonly problem: string } {
  // dotAll: JSON.stringify (formatMatchers) leaves U+2028 and U+2029 unescaped, and `.` would stop at them
  const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*(.*?)\s*$/su.exec(text);
  if (match === null)
    return { problem: `"${text}" is not a matcher: use name=value, name!=value, name=~regex or name!~regex` };
  const [, name = "", operator = "=", raw = ""] = match;
  let value = raw;
  if (raw.startsWith('"')) {
    try {
      value = JSON.parse(raw) as string;
    } catch {
      return { problem: `"${text}": the quoted value is not a valid JSON string` };
    }
    if (typeof value !== "string") return { problem: `"${text}": the quoted value is not a string` };
  }
  const matcher = { name, value, isRegex: operator.endsWith("~"), isEqual: !operator.startsWith("!") };
  if (matcher.isRegex)
    try {
      compileMatcherRegex(value);
    } catch (error) {
      return { problem: `"${text}": not a valid regular expression (${(error as Error).message})` };
    }
  return matcher;
}

/** What muting remembers of a firing alert: the silences and the parent on its latest announcement, and whether any was notified. */
export interface MuteMemory {
  readonly silencedBy: readonly string[];
  /** The cause alert its latest announcement was a child of; absent when none. */
  readonly causedBy?: string;
  readonly notified: boolean;
}

/** What muting stamps on a transition: the silences and the parent that keep it from chat-ops sinks. */
export interface MuteStamp {
  readonly silencedBy: readonly string[];
  readonly causedBy: string | undefined;
  readonly memory: MuteMemory | undefined;
}

/**
 * The `silencedBy` and `causedBy` a transition carries and what to remember after it. A firing announcement is
 * muted by the silences active now (`activeIds`) and by its firing parent (`causedBy`); a resolve is muted only
 * when no announcement of its firing was notified (a person who was paged hears that it resolved, even under a
 * silence created since or a parent that adopted it; one who was never paged hears nothing), and then carries
 * the muting of the alert's latest announcement.
 */
export function muteTransition(
  previous: MuteMemory | undefined,
  status: "firing" | "resolved",
  activeIds: readonly string[],
  causedBy?: string,
): MuteStamp {
  if (status === "resolved") {
    const muted = previous !== undefined && !previous.notified;
    return {
      silencedBy: muted ? previous.silencedBy : NO_IDS,
      causedBy: muted ? previous.causedBy : undefined,
      memory: undefined,
    };
  }
  const notified = previous?.notified === true || (activeIds.length === 0 && causedBy === undefined);
  const memory: MuteMemory =
    causedBy === undefined
      ? { silencedBy: activeIds, notified }
      : { silencedBy: activeIds, causedBy, notified };
  return { silencedBy: activeIds, causedBy, memory };
}

/** Whether two matcher lists say the same, in any order. */
export function sameMatchers(a: readonly SilenceMatcher[], b: readonly SilenceMatcher[]): boolean {
  const key = (list: readonly SilenceMatcher[]): string =>
    list
      .map((m) => JSON.stringify([m.name, matcherOperator(m), m.value]))
      .sort()
      .join();
  return a.length === b.length && key(a) === key(b);
}
