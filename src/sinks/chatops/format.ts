// Text helpers every renderer shares: alert subject, durations, group notification lines and safe truncation.
import { severityRank, type AlertEvent, type AlertPayload, type Severity } from "../../domain/events.js";
import type { GroupAlert, GroupAlertState } from "./group-schedule.js";
import type { GroupMessage } from "./types.js";

/** Labels that identify what an alert is about, in the order they are shown. */
const SUBJECT_LABELS = ["pair", "vault", "publisher", "source", "network", "sink", "endpoint"] as const;

/** Short "what" of an alert, e.g. "BTC/USD price_change". */
export function alertSubject(alert: AlertPayload): string {
  const key = SUBJECT_LABELS.find((name) => alert.labels[name] !== undefined);
  return key === undefined ? alert.rule : `${alert.labels[key]} ${alert.rule}`;
}

/** Status emoji: a coloured circle per severity while firing, a check mark once resolved. */
export function statusEmoji(alert: AlertPayload): string {
  if (alert.status === "resolved") return "✅";
  return SEVERITY_EMOJI[alert.severity];
}

const SEVERITY_EMOJI: Readonly<Record<Severity, string>> = { critical: "🔴", warning: "🟠", info: "🔵" };

/** Human duration such as "1h 2m" or "45s" from milliseconds. */
export function formatDurationMs(durationMs: number): string {
  const totalS = Math.max(0, Math.round(durationMs / 1000));
  const d = Math.floor(totalS / 86_400);
  const h = Math.floor((totalS % 86_400) / 3600);
  const m = Math.floor((totalS % 3600) / 60);
  const s = totalS % 60;
  const parts = [d > 0 ? `${d}d` : "", h > 0 ? `${h}h` : "", m > 0 ? `${m}m` : "", s > 0 ? `${s}s` : ""];
  const text = parts
    .filter((part) => part !== "")
    .slice(0, 2)
    .join(" ");
  return text === "" ? "0s" : text;
}

/** How long a resolved alert fired ("" when the times are missing or unparsable). */
export function firedForText(alert: AlertPayload): string {
  if (alert.endsAt === null) return "";
  const startMs = Date.parse(alert.startsAt);
  const endMs = Date.parse(alert.endsAt);
  if (!Number.isFinite(startMs) || !Number.isFinite(endMs)) return "";
  return formatDurationMs(endMs - startMs);
}

/** A number for display: integers as is, others to 6 significant digits; null as "n/a". */
export function formatValue(value: number | null): string {
  if (value === null) return "n/a";
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(6)));
}

/** Headline line of an alert: status, severity and subject. */
export function alertTitle(alert: AlertPayload): string {
  const status = alert.status === "firing" ? "FIRING" : "RESOLVED";
  return `${statusEmoji(alert)} ${status} [${alert.severity}] ${alertSubject(alert)}`;
}

/** Latest transition per fingerprint of a batch, split into firing and resolved, oldest first. */
export interface LatestAlerts {
  readonly firing: readonly AlertPayload[];
  readonly resolved: readonly AlertPayload[];
}

/** Keep only the last transition of each fingerprint of `events` (Alertmanager's batch). */
export function latestPerFingerprint(events: readonly AlertEvent[]): LatestAlerts {
  const latest = new Map<string, AlertPayload>();
  for (const event of events) {
    latest.delete(event.alert.fingerprint);
    latest.set(event.alert.fingerprint, event.alert);
  }
  const all = [...latest.values()];
  return {
    firing: all.filter((alert) => alert.status === "firing"),
    resolved: all.filter((alert) => alert.status === "resolved"),
  };
}

/** How many alerts of a group notification are in each state. */
export function groupCounts(message: GroupMessage): Readonly<Record<GroupAlertState, number>> {
  const counts = { new: 0, firing: 0, resolved: 0 };
  for (const { state } of message.alerts) counts[state] += 1;
  return counts;
}

/** Headline of a group notification, e.g. "🔴 FIRING 5 alerts: 3 new, 1 still firing, 1 resolved · market=onchain". */
export function groupHeadline(message: GroupMessage): string {
  const counts = groupCounts(message);
  const worst = worstFiring(message);
  const emoji = worst === undefined ? "✅" : SEVERITY_EMOJI[worst];
  const status = message.status === "firing" ? "FIRING" : "RESOLVED";
  const parts = [
    counts.new > 0 ? `${counts.new} new` : "",
    counts.firing > 0 ? `${counts.firing} still firing` : "",
    counts.resolved > 0 ? `${counts.resolved} resolved` : "",
  ].filter((part) => part !== "");
  const scope = Object.entries(message.labels).map(([name, value]) => `${name}=${value}`);
  const reminder = message.repeat ? " (reminder)" : "";
  const head = `${emoji} ${status}${reminder} ${plural(message.alerts.length, "alert")}: ${parts.join(", ")}`;
  return scope.length === 0 ? head : `${head} · ${scope.join(", ")}`;
}

/** The most severe severity among the firing alerts of a group notification; undefined when none fires. */
export function worstFiring(message: GroupMessage): Severity | undefined {
  let worst: Severity | undefined;
  for (const { alert } of message.alerts)
    if (
      alert.status === "firing" &&
      (worst === undefined || severityRank(alert.severity) > severityRank(worst))
    )
      worst = alert.severity;
  return worst;
}

/** The tag of an alert's state in a group notification line. */
export const GROUP_STATE_TAG: Readonly<Record<GroupAlertState, string>> = {
  new: "new",
  firing: "still firing",
  resolved: "resolved",
};

/** One line of a group notification (plain text; renderers escape it): "🔴 new · BTC/USD price_change: summary". */
export function groupLineParts(listed: GroupAlert): { readonly head: string; readonly summary: string } {
  const { alert, state } = listed;
  const firedFor = state === "resolved" ? firedForText(alert) : "";
  const summary = firedFor === "" ? alert.summary : `${alert.summary} (fired for ${firedFor})`;
  return { head: `${statusEmoji(alert)} ${GROUP_STATE_TAG[state]} · ${alertSubject(alert)}`, summary };
}

/** The seqs a group notification delivers, as "#12–#40" or "#12, #15" text ("" for none). */
export function seqRangeText(message: GroupMessage): string {
  const seqs = message.events.map((event) => event.seq);
  if (seqs.length === 0) return "";
  const first = Math.min(...seqs);
  const last = Math.max(...seqs);
  return first === last ? `#${first}` : `#${first}–#${last}`;
}

/** "1 alert" / "3 alerts". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** Cut `text` to at most `maxChars` UTF-16 units, ending with "…" when cut (never splits a surrogate pair). */
export function truncate(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = Math.max(0, maxChars - 1);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** Join lines until `maxChars` would be exceeded, then append "… and N more". */
export function joinLinesWithin(lines: readonly string[], maxChars: number, separator = "\n"): string {
  let out = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const next = out === "" ? line : `${out}${separator}${line}`;
    const rest = lines.length - i - 1;
    const reserve = rest > 0 ? `${separator}… and ${rest} more`.length + 8 : 0;
    if (next.length + reserve > maxChars) return `${out}${separator}… and ${lines.length - i} more`;
    out = next;
  }
  return out;
}

/** Labels every alert has with the same value (Alertmanager's commonLabels); {} for no alert. */
export function commonLabelsOf(alerts: readonly AlertPayload[]): Record<string, string> {
  const [first, ...rest] = alerts;
  if (first === undefined) return {};
  const common: Record<string, string> = {};
  for (const [name, value] of Object.entries(first.labels))
    if (rest.every((alert) => alert.labels[name] === value)) common[name] = value;
  return common;
}
