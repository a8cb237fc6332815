// Text helpers every renderer shares: alert subject, durations, digest grouping and safe truncation.
import type { AlertEvent, AlertPayload, Severity } from "../../domain/events.js";

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

/** Latest transition per fingerprint of a digest, split into firing and resolved, oldest first. */
export interface DigestGroups {
  readonly firing: readonly AlertPayload[];
  readonly resolved: readonly AlertPayload[];
}

/** Group digest events, keeping only the last transition of each fingerprint. */
export function groupDigest(events: readonly AlertEvent[]): DigestGroups {
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

/** Digest headline, e.g. "7 alerts firing: BTC/USD price_change, …; 2 resolved: …". */
export function digestHeadline(groups: DigestGroups, maxChars = 300): string {
  const parts: string[] = [];
  if (groups.firing.length > 0)
    parts.push(`${plural(groups.firing.length, "alert")} firing: ${subjects(groups.firing)}`);
  if (groups.resolved.length > 0)
    parts.push(`${groups.resolved.length} resolved: ${subjects(groups.resolved)}`);
  return truncate(parts.length === 0 ? "no alert changes" : parts.join("; "), maxChars);
}

/** "1 alert" / "3 alerts". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function subjects(alerts: readonly AlertPayload[]): string {
  const shown = alerts.slice(0, 5).map(alertSubject);
  return alerts.length > shown.length ? `${shown.join(", ")}, …` : shown.join(", ");
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
