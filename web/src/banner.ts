// The banner's verdict: one line for the whole daemon (all good, N firing, upstream failing, degraded sinks) (pure).
import type { Connection } from "./store.js";
import type { AlertPayload, SinkStatus } from "./types.js";

/** How the banner looks: ok (green), warning, critical, or unknown (no live data). */
export type BannerLevel = "ok" | "warning" | "critical" | "unknown";

/** What the banner shows. */
export interface Banner {
  readonly level: BannerLevel;
  /** The headline, most urgent condition first. */
  readonly title: string;
  /** Every other condition that holds, one short phrase each. */
  readonly details: readonly string[];
}

/** What the banner is decided from. */
export interface BannerInput {
  readonly connection: Connection;
  readonly alerts: readonly AlertPayload[];
  /** From the status read; null before it answered. */
  readonly sinks: readonly SinkStatus[] | null;
  readonly readiness: { readonly ready: boolean; readonly reasons: readonly string[] } | null;
}

const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

/** Names of sinks that do not deliver: failing, or not running; plus those a sink_error alert names. */
function degradedSinks(input: BannerInput): string[] {
  const names = new Set<string>();
  for (const sink of input.sinks ?? []) if (sink.failing || !sink.running) names.add(sink.name);
  for (const alert of input.alerts)
    if (alert.rule === "sink_error") names.add(alert.labels["sink"] ?? alert.labels["endpoint"] ?? "a sink");
  return [...names].sort();
}

/** The conditions that hold, as [level, phrase], most urgent first. */
function conditions(input: BannerInput): [BannerLevel, string][] {
  const found: [BannerLevel, string][] = [];
  const loud = input.alerts.filter((alert) => (alert.silencedBy?.length ?? 0) === 0);
  const upstream = new Set(
    input.alerts.filter((a) => a.rule === "upstream_error").map((a) => a.labels["endpoint"] ?? a.fingerprint),
  );
  if (upstream.size > 0)
    found.push(["critical", `upstream failing on ${plural(upstream.size, "target", "targets")}`]);
  if (loud.length > 0) {
    const critical = loud.filter((alert) => alert.severity === "critical").length;
    const extra = critical > 0 ? ` (${critical} critical)` : "";
    found.push([critical > 0 ? "critical" : "warning", `${loud.length} firing${extra}`]);
  }
  const silenced = input.alerts.length - loud.length;
  if (silenced > 0) found.push(["ok", `${silenced} silenced`]);
  const sinks = degradedSinks(input);
  if (sinks.length > 0)
    found.push(["warning", `degraded ${sinks.length === 1 ? "sink" : "sinks"}: ${sinks.join(", ")}`]);
  if (input.readiness !== null && !input.readiness.ready)
    found.push(["warning", `not ready: ${input.readiness.reasons.join("; ") || "starting"}`]);
  return found;
}

const RANK: Readonly<Record<BannerLevel, number>> = { ok: 0, unknown: 1, warning: 2, critical: 3 };

/** Decide the banner. Without a live connection the level is unknown: what shows is the last known state. */
export function decideBanner(input: BannerInput): Banner {
  if (input.connection === "unauthorized")
    return { level: "unknown", title: "A token is required to read this daemon", details: [] };
  if (input.connection === "connecting")
    return { level: "unknown", title: "Connecting to the daemon…", details: [] };
  const found = conditions(input);
  const details = found.map(([, phrase]) => phrase);
  if (input.connection === "reconnecting")
    return { level: "unknown", title: "Disconnected: reconnecting (showing the last known state)", details };
  const urgent = found.filter(([level]) => level !== "ok");
  const top = urgent[0];
  if (top === undefined) return { level: "ok", title: "All good", details };
  const level = urgent.reduce<BannerLevel>((worst, [l]) => (RANK[l] > RANK[worst] ? l : worst), "ok");
  const title = top[1].charAt(0).toUpperCase() + top[1].slice(1);
  // the headline is not repeated below it
  return { level, title, details: details.filter((detail) => detail !== top[1]) };
}
