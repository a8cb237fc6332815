// The `backtest --html` report: one self-contained page (inline CSS and SVG, no script, no fetch), light and dark, byte-identical for the same inputs (pure).
import { writeFileSync } from "node:fs";
import type { AppConfig } from "../config/types.js";
import type { AlertPayload } from "../domain/events.js";
import { planTargets } from "../pipeline/targets.js";
import type { TargetSpec } from "../domain/types.js";
import { comparisonRows, formatDuration } from "../cli/backtest-format.js";
import type { ReplayPrice, ReplayResult, ReplayTransition } from "./replay.js";
import type { BacktestReport } from "./summary.js";

/** What the page shows: the report, the prices charted per off-chain target, and the transitions behind the timeline. */
export interface HtmlReportInput {
  readonly title: string;
  readonly report: BacktestReport;
  /** Configured targets; each off-chain one with prices gets a chart. */
  readonly targets: readonly TargetSpec[];
  readonly prices: ReadonlyMap<string, readonly ReplayPrice[]>;
  /** The replay's transitions, in the order of `report.timeline`. */
  readonly transitions: readonly ReplayTransition[];
  /** With --compare: the two configs' names and the second run (B), shown beside the first (A). */
  readonly compare?: {
    readonly names: readonly [string, string];
    readonly report: BacktestReport;
    readonly targets: readonly TargetSpec[];
    readonly prices: ReadonlyMap<string, readonly ReplayPrice[]>;
    readonly transitions: readonly ReplayTransition[];
  };
}

/** Chart geometry in SVG user units. */
const WIDTH = 960;
const HEIGHT = 260;
const PAD = { left: 78, right: 12, top: 18, bottom: 30 } as const;

/** Escape text for HTML element content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const STYLE = `:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#59636e;--grid:#d8dee4;--line:#0969da;--fire:#cf222e;--ok:#1a7f37;--band:rgba(207,34,46,.12);--band-b:rgba(130,80,223,.14);--row:#f6f8fa}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--grid:#30363d;--line:#4493f8;--fire:#ff7b72;--ok:#3fb950;--band:rgba(255,123,114,.16);--band-b:rgba(188,140,255,.18);--row:#161b22}}
body{margin:0 auto;max-width:1000px;padding:16px;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,sans-serif}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}.muted{color:var(--muted)}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--grid);vertical-align:top}td{overflow-wrap:anywhere}th,td.n{white-space:nowrap}
tbody tr:nth-child(odd){background:var(--row)}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
svg.chart{width:100%;height:auto;display:block}.chart text{fill:var(--muted);font-size:11px}
.grid{stroke:var(--grid);stroke-width:1}.price{fill:none;stroke:var(--line);stroke-width:1.5}
.band{fill:var(--band)}.marker line{stroke-width:1.5;stroke-dasharray:3 2}
.firing line{stroke:var(--fire)}.firing path{fill:var(--fire)}.resolved line{stroke:var(--ok)}.resolved path{fill:var(--ok)}
.band.b{fill:var(--band-b)}.marker.b line{stroke-dasharray:1 3}.marker.b path{fill:none;stroke-width:1.5}.firing.b path{stroke:var(--fire)}.resolved.b path{stroke:var(--ok)}
.legend span{margin-right:14px}.fire{color:var(--fire)}.ok{color:var(--ok)}.bad{color:var(--fire);font-weight:600}`;

/** One run's line under the title: its range, size and completeness. */
function runLine(report: BacktestReport, prefix: string): string {
  const status = report.complete
    ? "complete"
    : `<span class="bad">incomplete: ${report.problems.length} problems</span>`;
  return `<p class="muted">${prefix}${escapeHtml(report.from)} → ${escapeHtml(report.to)} · ${report.observations} observations · ${report.timeline.length} transitions · ${status}</p>`;
}

/** One run's tables: rules per target, notifications per sink, problems, timeline (headings suffixed with the run). */
function runTables(report: BacktestReport, suffix: string): string[] {
  return [
    `<h2>Rules per target${suffix}</h2>`,
    rulesTable(report),
    `<h2>Notifications per sink${suffix}</h2>`,
    sinksTable(report),
    ...problems(report, suffix),
    `<h2>Timeline${suffix}</h2>`,
    timelineTable(report),
  ];
}

/** The whole page: one run, or with `compare` both (charts marked per run, the differences, then each run's tables). */
export function renderHtmlReport(input: HtmlReportInput): string {
  const { report, compare } = input;
  const body =
    compare === undefined
      ? [
          `<h1>${escapeHtml(input.title)}</h1>`,
          runLine(report, ""),
          ...charts(input),
          ...runTables(report, ""),
        ]
      : [
          `<h1>${escapeHtml(input.title)}</h1>`,
          runLine(report, `A: ${escapeHtml(compare.names[0])} · `),
          runLine(compare.report, `B: ${escapeHtml(compare.names[1])} · `),
          ...charts(input),
          ...differenceTables(report, compare.report),
          ...runTables(report, ` · A: ${escapeHtml(compare.names[0])}`),
          ...runTables(compare.report, ` · B: ${escapeHtml(compare.names[1])}`),
        ];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(input.title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body.join("\n")}
</body>
</html>
`;
}

/** A table from a header and escaped-on-the-way rows; `numeric` columns are right-aligned. */
function table(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  numeric: ReadonlySet<number>,
): string {
  const cell = (tag: string, text: string, i: number): string =>
    `<${tag}${numeric.has(i) ? ' class="n"' : ""}>${escapeHtml(text)}</${tag}>`;
  return `<table><thead><tr>${head.map((h, i) => cell("th", h, i)).join("")}</tr></thead><tbody>
${rows.map((row) => `<tr>${row.map((c, i) => cell("td", c, i)).join("")}</tr>`).join("\n")}
</tbody></table>`;
}

/** Fires, time firing and flaps per rule and target. */
function rulesTable(report: BacktestReport): string {
  if (report.rules.length === 0) return "<p>No rule fired.</p>";
  const rows = report.rules.map((r) => [
    r.rule,
    r.kind,
    r.target,
    String(r.fired),
    formatDuration(r.firingMs),
    String(r.flaps),
  ]);
  return table(["rule", "kind", "target", "fired", "time firing", "flaps"], rows, new Set([3, 4, 5]));
}

/** What each sink would have received. */
function sinksTable(report: BacktestReport): string {
  if (report.sinks.length === 0) return "<p>No chat-ops sink configured.</p>";
  const rows = report.sinks.map((s) =>
    [s.name, s.kind, s.notifications, s.alerts, s.repeats, s.silenced, s.filtered].map(String),
  );
  const head = ["sink", "kind", "notifications", "alerts", "repeats", "silenced", "filtered"];
  return table(head, rows, new Set([2, 3, 4, 5, 6]));
}

/** Fires per rule and pages per sink of A and B, with B's difference (the text output's comparison). */
function differenceTables(a: BacktestReport, b: BacktestReport): string[] {
  const { rules, sinks } = comparisonRows(a, b);
  const diff = (x: number, y: number): string => (y - x > 0 ? `+${y - x}` : String(y - x));
  const rows = (list: readonly (readonly [string, number, number])[]): string[][] =>
    list.map(([name, x, y]) => [name, String(x), String(y), diff(x, y)]);
  const numeric = new Set([1, 2, 3]);
  return [
    "<h2>Pages per sink: A vs B</h2>",
    sinks.length === 0
      ? "<p>No chat-ops sink configured.</p>"
      : table(["sink", "pages A", "pages B", "difference"], rows(sinks), numeric),
    "<h2>Fired per rule: A vs B</h2>",
    rules.length === 0
      ? "<p>No rule fired.</p>"
      : table(["rule", "fired A", "fired B", "difference"], rows(rules), numeric),
  ];
}

/** The problems that make the run incomplete. */
function problems(report: BacktestReport, suffix: string): string[] {
  if (report.problems.length === 0) return [];
  const rows = report.problems.map((p) => [p.at ?? "", p.kind, p.message]);
  return [
    `<h2>Problems (${report.problems.length})${suffix}</h2>`,
    table(["where", "kind", "message"], rows, new Set()),
  ];
}

/** Every transition in order. */
function timelineTable(report: BacktestReport): string {
  if (report.timeline.length === 0) return "<p>No transitions.</p>";
  const rows = report.timeline.map((t) => [
    t.at,
    t.status === "firing" ? (t.reason === "repeat" ? "repeat" : "firing") : "resolved",
    t.rule,
    t.target,
    t.summary + (t.silencedBy === undefined ? "" : ` [silenced: ${t.silencedBy.join(", ")}]`),
  ]);
  return table(["time", "status", "rule", "target", "summary"], rows, new Set());
}

/** Whether an alert is about `spec`: its endpoint label, else its pair (not on-chain, not a funding rate, same entry type). */
export function alertConcerns(alert: Pick<AlertPayload, "rule" | "labels">, spec: TargetSpec): boolean {
  const { endpoint, pair, market, entry_type: entryType } = alert.labels;
  if (endpoint !== undefined) return endpoint === spec.id;
  if (spec.kind !== "offchain" || pair !== spec.pair || alert.rule === "funding_rate") return false;
  return market !== "onchain" && (entryType === undefined || entryType === spec.entryType);
}

/** Labels that tie an alert to a target or a part of the market. */
const TARGET_LABELS = ["endpoint", "pair", "vault", "network", "publisher", "source"] as const;

/** Whether an alert names no target at all (upstream_down, market_move): it is marked on every chart. */
const isGlobal = (alert: Pick<AlertPayload, "labels">): boolean =>
  TARGET_LABELS.every((name) => alert.labels[name] === undefined);

/** The transitions a chart marks, and whose run they are (null: the only run; "b": the --compare run). */
interface ChartRun {
  readonly run: "a" | "b" | null;
  readonly transitions: readonly ReplayTransition[];
}

/** One chart per off-chain target with prices (of either run), in target id order; with --compare, both runs' markers. */
function charts(input: HtmlReportInput): string[] {
  const { compare } = input;
  const byId = new Map([...(compare?.targets ?? []), ...input.targets].map((spec) => [spec.id, spec]));
  const pricesOf = (id: string): readonly ReplayPrice[] =>
    input.prices.get(id) ?? compare?.prices.get(id) ?? [];
  const specs = [...byId.values()]
    .filter((spec) => spec.kind === "offchain" && pricesOf(spec.id).length > 0)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  if (specs.length === 0) return [];
  const fromMs = Date.parse(input.report.from);
  const toMs = Math.max(Date.parse(input.report.to), fromMs + 1);
  const runs: ChartRun[] =
    compare === undefined
      ? [{ run: null, transitions: input.transitions }]
      : [
          { run: "a", transitions: input.transitions },
          { run: "b", transitions: compare.transitions },
        ];
  return [
    "<h2>Prices and transitions</h2>",
    compare === undefined
      ? `<p class="legend muted"><span class="fire">▼ firing</span><span class="ok">▲ resolved</span><span>shaded: firing</span></p>`
      : `<p class="legend muted"><span>A: <span class="fire">▼ firing</span> <span class="ok">▲ resolved</span>, shaded above</span><span>B: <span class="fire">▽ firing</span> <span class="ok">△ resolved</span>, dotted, shaded below</span></p>`,
    ...specs.map((spec) => {
      const concerning = runs.map(({ run, transitions }) => ({
        run,
        transitions: transitions.filter((t) => alertConcerns(t.alert, spec) || isGlobal(t.alert)),
      }));
      const name = spec.kind === "offchain" ? spec.pair : spec.id;
      return `<section class="target" data-target="${escapeHtml(spec.id)}">
<h3>${escapeHtml(name)} <span class="muted">${escapeHtml(spec.id)}</span></h3>
${chart(name, pricesOf(spec.id), concerning, fromMs, toMs)}
</section>`;
    }),
  ];
}

/** A number as SVG coordinates write it (one decimal, no "-0"). */
const coord = (value: number): string => {
  const text = value.toFixed(1);
  return text === "-0.0" ? "0.0" : text;
};

/** A price label: six significant digits. */
const priceLabel = (price: number): string => String(Number(price.toPrecision(6)));

/** The SVG of one target: price line, y grid, firing bands and a marker per transition. */
function chart(
  name: string,
  points: readonly ReplayPrice[],
  runs: readonly ChartRun[],
  fromMs: number,
  toMs: number,
): string {
  const prices = points.map((p) => p.price);
  const low = Math.min(...prices);
  const high = Math.max(...prices);
  const span = high - low || Math.abs(high) * 0.01 || 1;
  const [yMin, yMax] = [low - span * 0.05, high + span * 0.05];
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (atMs: number): string => coord(PAD.left + ((atMs - fromMs) / (toMs - fromMs)) * plotW);
  const y = (price: number): string => coord(PAD.top + (1 - (price - yMin) / (yMax - yMin)) * plotH);
  const grid = [0, 1, 2, 3, 4].map((i) => {
    const price = yMin + ((yMax - yMin) * i) / 4;
    return `<line class="grid" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${y(price)}" y2="${y(price)}"/><text x="${PAD.left - 6}" y="${y(price)}" text-anchor="end" dominant-baseline="middle">${priceLabel(price)}</text>`;
  });
  const xLabels = [fromMs, (fromMs + toMs) / 2, toMs].map(
    (atMs, i) =>
      `<text x="${x(atMs)}" y="${HEIGHT - 8}" text-anchor="${["start", "middle", "end"][i] ?? "middle"}">${new Date(Math.round(atMs)).toISOString().replace(".000Z", "Z")}</text>`,
  );
  const line = points.map((p) => `${x(p.atMs)},${y(p.price)}`).join(" ");
  const counts = runs.map(
    ({ run, transitions }) =>
      `${transitions.length} transitions${run === null ? "" : ` (${run.toUpperCase()})`}`,
  );
  const label = `${name}: price from ${priceLabel(low)} to ${priceLabel(high)}, ${counts.join(", ")}`;
  return `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(label)}" xmlns="http://www.w3.org/2000/svg">
${grid.join("\n")}
${xLabels.join("\n")}
${runs.flatMap((run) => bands(run, fromMs, toMs, x)).join("\n")}
<polyline class="price" points="${line}"/>
${runs.flatMap(({ run, transitions }) => transitions.map((t) => marker(t, x(t.atMs), run))).join("\n")}
</svg>`;
}

/** Shaded spans from each alert's first firing to its resolve (or the end of the run): A's upper half, B's lower. */
function bands(
  { run, transitions }: ChartRun,
  fromMs: number,
  toMs: number,
  x: (atMs: number) => string,
): string[] {
  const open = new Map<string, number>();
  const spans: [number, number][] = [];
  for (const { atMs, alert } of transitions) {
    if (alert.status === "firing" && alert.reason === "first") open.set(alert.fingerprint, atMs);
    const startMs = open.get(alert.fingerprint);
    if (alert.status === "resolved" && startMs !== undefined) {
      spans.push([startMs, atMs]);
      open.delete(alert.fingerprint);
    }
  }
  for (const startMs of open.values()) spans.push([startMs, toMs]);
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const h = run === null ? plotH : plotH / 2;
  const top = run === "b" ? PAD.top + h : PAD.top;
  const attrs = run === null ? 'class="band"' : `class="band${run === "b" ? " b" : ""}" data-run="${run}"`;
  return spans.map(([a, b]) => {
    const [x1, x2] = [Number(x(Math.max(a, fromMs))), Number(x(b))];
    return `<rect ${attrs} x="${coord(x1)}" y="${top}" width="${coord(Math.max(x2 - x1, 1))}" height="${h}"/>`;
  });
}

/**
 * One transition: a dashed vertical line and a triangle (▼ firing, ▲ resolved) with a tooltip; the --compare
 * run's (B) is dotted, its triangles hollow and inside the plot, so both runs' markers show at the same time.
 */
function marker(transition: ReplayTransition, xText: string, run: "a" | "b" | null): string {
  const { alert, atMs, seq } = transition;
  const firing = alert.status === "firing";
  const xm = Number(xText);
  const tip = `${new Date(atMs).toISOString()} ${firing ? alert.reason : "resolved"} ${alert.labels["rule_id"] ?? alert.rule}: ${alert.summary}`;
  const inside = run === "b";
  const triangle = firing
    ? `M${coord(xm - 5)} ${inside ? PAD.top + 1 : PAD.top - 8}h10l-5 8z`
    : `M${coord(xm - 5)} ${inside ? HEIGHT - PAD.bottom - 1 : HEIGHT - PAD.bottom + 8}h10l-5 -8z`;
  const classes = `marker ${firing ? "firing" : "resolved"}${inside ? " b" : ""}`;
  const dataRun = run === null ? "" : ` data-run="${run}"`;
  const tipRun = run === null ? "" : `${run.toUpperCase()}: `;
  return `<g class="${classes}"${dataRun} data-seq="${seq}" data-reason="${escapeHtml(alert.reason)}"><title>${escapeHtml(tipRun + tip)}</title><line x1="${xText}" x2="${xText}" y1="${PAD.top}" y2="${HEIGHT - PAD.bottom}"/><path d="${triangle}"/></g>`;
}

/** The HTML report file could not be written (sysexits EX_CANTCREAT). */
export const EX_CANTCREAT = 73;

/** A run as the HTML report needs it: its config's targets, its replay's prices and transitions, its report. */
export interface HtmlRun {
  /** The config's name (shown with --compare). */
  readonly name: string;
  readonly config: Pick<AppConfig, "monitors" | "upstream">;
  readonly result: Pick<ReplayResult, "prices" | "transitions">;
  readonly report: BacktestReport;
}

/** Render one run, or two (--compare: the first is A), and write it to `file`; throws an Error naming the file when it cannot be written. */
export function writeHtmlReport(
  file: string,
  title: string,
  [a, b]: readonly [HtmlRun, HtmlRun?] | readonly HtmlRun[],
): void {
  if (a === undefined) return;
  const targetsOf = (run: HtmlRun): TargetSpec[] =>
    planTargets(run.config.monitors, run.config.upstream.transport).map((plan) => plan.spec);
  const html = renderHtmlReport({
    title,
    report: a.report,
    targets: targetsOf(a),
    prices: a.result.prices,
    transitions: a.result.transitions,
    ...(b === undefined
      ? {}
      : {
          compare: {
            names: [a.name, b.name],
            report: b.report,
            targets: targetsOf(b),
            prices: b.result.prices,
            transitions: b.result.transitions,
          },
        }),
  });
  try {
    writeFileSync(file, html);
  } catch (error) {
    throw new Error(
      `cannot write the HTML report ${file}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
