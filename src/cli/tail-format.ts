// The lines `pragma-monitor tail` prints: events, the firing alerts on connect, idle and gap notices (pure).
import type { AlertEvent, AlertPayload, LifecycleEvent, PriceEvent, Severity } from "../domain/events.js";

const ANSI = { red: 31, green: 32, yellow: 33, cyan: 36, dim: 2 } as const;
const paint = (text: string, code: number, color: boolean): string =>
  color ? `\x1b[${code}m${text}\x1b[0m` : text;
/** Server text is untrusted: strip control characters so it cannot drive the terminal. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const clean = (text: string): string => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
const SEVERITY_COLOR: Readonly<Record<Severity, number>> = {
  critical: ANSI.red,
  warning: ANSI.yellow,
  info: ANSI.cyan,
};

/** How a line names the alert's parent: what tail knows of it, else its fingerprint. */
export interface AlertLineOptions {
  readonly color: boolean;
  /** The parent alert named by `causedBy`, when tail has seen it. */
  readonly parent?: AlertPayload | undefined;
}

/** "[caused by <rule>: <summary>]" for a child alert, its parent's fingerprint when tail has not seen the parent. */
function causedByPart(alert: AlertPayload, parent: AlertPayload | undefined): string[] {
  if (alert.causedBy === undefined) return [];
  const named =
    parent !== undefined && parent.fingerprint === alert.causedBy
      ? `${clean(parent.rule)}: ${clean(parent.summary)}`
      : clean(alert.causedBy);
  return [`[caused by ${named}]`];
}

/** Time, `marker` (`#seq`, or `active` for the state on connect), status and severity, rule, labels, summary. */
function alertLine(alert: AlertPayload, marker: string, options: AlertLineOptions): string {
  const { color } = options;
  const resolved = alert.status === "resolved";
  const at = resolved ? (alert.endsAt ?? alert.startsAt) : alert.startsAt;
  const status = `${resolved ? "RESOLVED" : "FIRING"} ${alert.severity}`;
  const labels = Object.entries(alert.labels)
    .map(([key, value]) => `${clean(key)}=${/[\s"=]/.test(value) ? JSON.stringify(value) : clean(value)}`)
    .join(" ");
  const repeat = alert.reason === "repeat" ? " (repeat)" : "";
  const silenced =
    alert.silencedBy === undefined ? [] : [`[silenced by ${alert.silencedBy.map(clean).join(", ")}]`];
  return [
    paint(`${clean(at)} ${marker}`, ANSI.dim, color),
    paint(status, resolved ? ANSI.green : SEVERITY_COLOR[alert.severity], color),
    `${clean(alert.rule)}${repeat}`,
    ...(labels === "" ? [] : [labels]),
    `— ${clean(alert.summary)}`,
    ...causedByPart(alert, options.parent),
    ...silenced,
  ].join(" ");
}

/** One line for an alert event: time, seq, status and severity (coloured), rule, labels, summary. */
export function formatAlertLine(event: AlertEvent, options: AlertLineOptions): string {
  return alertLine(event.alert, `#${event.seq}`, options);
}

/** One line for an alert already firing when tail connected (from the `subscribed` reply): since when, no seq. */
export function formatActiveLine(alert: AlertPayload, options: AlertLineOptions): string {
  return alertLine(alert, "active", options);
}

/** One line for a lifecycle event: the daemon started, reloaded or is stopping; a silence was created or expired. */
export function formatLifecycleLine(event: LifecycleEvent, options: { readonly color: boolean }): string {
  const head = paint(`${clean(event.at)} #${event.seq}`, ANSI.dim, options.color);
  const { detail } = event;
  if (event.event !== "silence_created" && event.event !== "silence_expired")
    return `${head} daemon ${event.event} (v${clean(event.version)})`;
  const what = event.event === "silence_created" ? "silence created" : "silence expired";
  const field = (key: string): string => clean(String(detail?.[key] ?? "?"));
  return `${head} ${what} ${field("id")} ${field("matchers")} until ${field("endsAt")} by ${field("createdBy")} (${field("cause")}): ${field("comment")}`;
}

/** One line for a price tick. */
export function formatPriceLine(event: PriceEvent, options: { readonly color: boolean }): string {
  const { tick } = event;
  const where = [tick.market, tick.network, tick.entryType].filter((part) => part !== undefined).join(" ");
  return `${paint(clean(tick.observedAt), ANSI.dim, options.color)} ${clean(tick.pair)} ${clean(tick.price)} (${clean(where)}, ${tick.numSources} sources)`;
}

/** The notice printed when the server no longer holds events the tail missed. */
export function formatGapLine(from: number, to: number): string {
  return `gap: events #${from}..#${to} are no longer held by the server and were missed`;
}

const firingCount = (firing: number): string => `${firing} firing`;

/** The notice on every (re)connection: where, how many alerts fire now, and whether missed events are replayed. */
export function formatConnectedLine(url: string, firing: number, resumedAfterSeq: number | null): string {
  return resumedAfterSeq === null
    ? `connected to ${url} (${firingCount(firing)})`
    : `reconnected to ${url} (${firingCount(firing)}); replaying what was missed after #${resumedAfterSeq}`;
}

/** A duration for humans: "45 s", "2 min", "1 h 5 min". */
export function formatDuration(durationMs: number): string {
  const seconds = Math.floor(durationMs / 1_000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The notice printed while nothing happens, so a quiet tail is visibly still connected (heartbeats answered). */
export function formatIdleLine(url: string, idleMs: number, firing: number): string {
  return `still connected to ${url}: no new events for ${formatDuration(idleMs)} (${firingCount(firing)})`;
}

/** When to print the next idle notice: after `firstMs` of silence, then twice as long each time, at most `maxMs`. */
export function nextIdleNoticeMs(
  previousMs: number | null,
  schedule: { readonly firstMs: number; readonly maxMs: number },
): number {
  return previousMs === null ? schedule.firstMs : Math.min(previousMs * 2, schedule.maxMs);
}
