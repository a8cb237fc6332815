// The text of `pragma-monitor backtest`: rules per target, notifications per sink, problems, the timeline; and two runs side by side.
import type { BacktestReport } from "../backtest/summary.js";

/** "1h 2m 3s" (ms below a second are dropped; "0s" for nothing). */
export function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const parts = [
    [Math.floor(s / 86_400), "d"],
    [Math.floor((s % 86_400) / 3600), "h"],
    [Math.floor((s % 3600) / 60), "m"],
    [s % 60, "s"],
  ] as const;
  const text = parts
    .filter(([n]) => n > 0)
    .map(([n, unit]) => `${n}${unit}`)
    .join(" ");
  return text === "" ? "0s" : text;
}

/** Rows as aligned columns. */
function columns(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}

/** The whole report as text. */
export function formatReport(report: BacktestReport, title: string): string {
  const out = [`${title}: ${report.from} → ${report.to}, ${report.observations} observations`, ""];
  out.push(...formatRules(report), "");
  out.push("Notifications per sink (after filters, muting, grouping and rate limits):");
  if (report.sinks.length === 0) out.push("  (no chat-ops sink configured)");
  out.push(
    ...columns(
      report.sinks.map((s) => [
        `  ${s.name} (${s.kind})`,
        `${s.notifications} notifications`,
        `${s.alerts} alerts`,
        `${s.repeats} repeats`,
        `${s.silenced} silenced`,
        `${s.filtered} filtered`,
      ]),
    ),
    "",
  );
  if (report.problems.length > 0) {
    out.push(`Problems (${report.problems.length}): the result is incomplete`);
    for (const p of report.problems) out.push(`  ${p.at === undefined ? "" : `${p.at}: `}${p.message}`);
    out.push("");
  }
  out.push(`Timeline (${report.timeline.length} transitions):`);
  for (const t of report.timeline)
    out.push(
      `  ${t.at}  ${t.status === "firing" ? (t.reason === "repeat" ? "REPEAT  " : "FIRING  ") : "RESOLVED"}  ${t.rule}  ${t.target}${t.silencedBy === undefined ? "" : `  [silenced: ${t.silencedBy.join(",")}]`}`,
    );
  return `${out.join("\n")}\n`;
}

/** The per rule and target table. */
function formatRules(report: BacktestReport): string[] {
  if (report.rules.length === 0) return ["No rule fired."];
  return columns([
    ["rule", "target", "fired", "firing", "flaps"],
    ...report.rules.map((r) => [
      r.rule,
      r.target,
      String(r.fired),
      formatDuration(r.firingMs),
      String(r.flaps),
    ]),
  ]);
}

/** Two runs side by side: fired per rule, notifications per sink, and the difference. */
export function formatComparison(
  a: BacktestReport,
  b: BacktestReport,
  names: readonly [string, string],
): string {
  const { rules, sinks } = comparisonRows(a, b);
  const diff = (x: number, y: number): string => (y - x > 0 ? `+${y - x}` : String(y - x));
  return `${[
    `Comparison: ${names[0]} (A) vs ${names[1]} (B), ${a.from} → ${a.to}`,
    "",
    ...columns([
      ["rule", "fired A", "fired B", "difference"],
      ...rules.map(([rule, x, y]) => [rule, String(x), String(y), diff(x, y)]),
    ]),
    "",
    ...columns([
      ["sink", "pages A", "pages B", "difference"],
      ...sinks.map(([sink, x, y]) => [sink, String(x), String(y), diff(x, y)]),
    ]),
  ].join("\n")}\n`;
}

/** Fires per rule and pages (notifications) per sink of runs A and B, by name: the comparison's rows. */
export function comparisonRows(
  a: BacktestReport,
  b: BacktestReport,
): {
  readonly rules: readonly (readonly [string, number, number])[];
  readonly sinks: readonly (readonly [string, number, number])[];
} {
  const rules = new Map<string, [number, number]>();
  for (const r of a.rules)
    rules.set(r.rule, [(rules.get(r.rule)?.[0] ?? 0) + r.fired, rules.get(r.rule)?.[1] ?? 0]);
  for (const r of b.rules)
    rules.set(r.rule, [rules.get(r.rule)?.[0] ?? 0, (rules.get(r.rule)?.[1] ?? 0) + r.fired]);
  const sinks = new Map<string, [number, number]>();
  for (const s of a.sinks) sinks.set(s.name, [s.notifications, 0]);
  for (const s of b.sinks) sinks.set(s.name, [sinks.get(s.name)?.[0] ?? 0, s.notifications]);
  const sorted = (m: Map<string, [number, number]>): [string, number, number][] =>
    [...m].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([name, [x, y]]) => [name, x, y]);
  return { rules: sorted(rules), sinks: sorted(sinks) };
}
