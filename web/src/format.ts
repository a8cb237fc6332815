// How the page writes times, ages, prices and an alert's value and threshold (pure, so the tests pin the text).

/** An age as people read it: "12s", "3m 05s", "2h 04m", "3d 4h" (negative ages, from clock skew, read as 0s). */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** A decimal price string shortened for a glance: 2 decimals from 1 000, 4 from 1, else 4 significant digits. */
export function formatPrice(text: string): string {
  const value = Number(text);
  if (!Number.isFinite(value)) return text;
  const abs = Math.abs(value);
  if (abs >= 1000) return value.toFixed(2);
  if (abs >= 1) return value.toFixed(4);
  if (abs === 0) return "0";
  // small prices keep their significant digits without switching to exponent notation
  const decimals = Math.min(20, 3 - Math.floor(Math.log10(abs)));
  return value.toFixed(decimals);
}

/** A fraction as a percentage: 0.0502 → "5.02%". */
export function formatPercent(fraction: number): string {
  const percent = fraction * 100;
  return `${Math.abs(percent) >= 10 ? percent.toFixed(1) : percent.toFixed(2)}%`;
}

/** Rules whose value and threshold are durations in ms, counts, or prices; the others are fractions. */
const MS_RULES = new Set(["stale_price", "publisher_stale", "monitor_stalled"]);
const COUNT_RULES = new Set(["low_sources", "upstream_error"]);
const PRICE_RULES = new Set(["price_level"]);

/** An alert's value or threshold in its rule's unit (README's rule table); null reads as "–". */
export function formatRuleValue(rule: string, value: number | null): string {
  if (value === null) return "–";
  if (MS_RULES.has(rule)) return formatAge(value);
  if (COUNT_RULES.has(rule)) return String(Math.round(value));
  if (PRICE_RULES.has(rule)) return formatPrice(String(value));
  if (rule === "funding_rate") return `${formatPercent(value)}/h`;
  return formatPercent(value);
}

/** "value vs threshold" of an alert, or "" when it has neither. */
export function formatValueVsThreshold(rule: string, value: number | null, threshold: number | null): string {
  if (value === null && threshold === null) return "";
  return `${formatRuleValue(rule, value)} (threshold ${formatRuleValue(rule, threshold)})`;
}

/** A time of day in the browser's zone, HH:MM:SS, for the timeline; the ISO text itself when unparsable. */
export function formatClock(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const date = new Date(ms);
  return [date.getHours(), date.getMinutes(), date.getSeconds()]
    .map((part) => String(part).padStart(2, "0"))
    .join(":");
}

/** Labels as `name=value` pairs, sorted by name, for a line of text. */
export function formatLabels(labels: Readonly<Record<string, string>>): string {
  return Object.keys(labels)
    .sort()
    .map((name) => `${name}=${labels[name] ?? ""}`)
    .join(" ");
}

/** One timeline line for a journaled event: a short badge and a sentence. */
export function describeEvent(
  event:
    | {
        readonly type: "alert";
        readonly alert: {
          readonly status: string;
          readonly reason: string;
          readonly severity: string;
          readonly rule: string;
          readonly summary: string;
        };
      }
    | {
        readonly type: "lifecycle";
        readonly event: string;
        readonly detail?: Readonly<Record<string, string | number | boolean>>;
      },
): { readonly badge: string; readonly text: string } {
  if (event.type === "alert") {
    const { alert } = event;
    const badge =
      alert.status === "resolved" ? "resolved" : alert.reason === "repeat" ? "reminder" : "firing";
    return { badge, text: `${alert.severity} ${alert.rule}: ${alert.summary}` };
  }
  const phase = event.event.replace(/_/g, " ");
  const detail = event.detail ?? {};
  if (event.event.startsWith("silence_") && typeof detail["matchers"] === "string")
    return { badge: "silence", text: `${phase}: ${silenceSentence(detail)}` };
  const pairs = Object.entries(detail)
    .map(([name, value]) => `${name}=${String(value)}`)
    .join(" ");
  return { badge: "daemon", text: `${phase}${pairs === "" ? "" : `: ${pairs}`}` };
}

/** A silence lifecycle event's detail as a sentence: what, by whom, until when, why (and how, when not by hand). */
function silenceSentence(detail: Readonly<Record<string, string | number | boolean>>): string {
  const text = (name: string): string => (typeof detail[name] === "string" ? detail[name] : "");
  const by = text("createdBy") === "" ? "" : ` by ${text("createdBy")}`;
  const until = text("endsAt") === "" ? "" : ` until ${formatClock(text("endsAt"))}`;
  const why = text("comment") === "" ? "" : ` (${text("comment")})`;
  const cause = ["", "created", "expired"].includes(text("cause"))
    ? ""
    : `, ${text("cause").replace(/_/g, " ")}`;
  return `${text("matchers")}${by}${until}${why}${cause}`;
}

/** When a journaled event happened: a lifecycle's `at`; a resolve's end; a firing or reminder's observation. */
export function eventTime(
  event:
    | {
        readonly type: "alert";
        readonly alert: {
          readonly startsAt: string;
          readonly endsAt: string | null;
          readonly context: Readonly<Record<string, unknown>>;
        };
      }
    | { readonly type: "lifecycle"; readonly at: string },
): string {
  if (event.type === "lifecycle") return event.at;
  const { alert } = event;
  if (alert.endsAt !== null) return alert.endsAt;
  const observedAt = alert.context["observedAt"];
  return typeof observedAt === "string" ? observedAt : alert.startsAt;
}
