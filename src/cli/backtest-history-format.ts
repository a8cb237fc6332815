// The text of a history backtest: each rule's candle verdict and the targets candles cannot feed, before the usual report.
import type { HistoryReport } from "./backtest-history.js";
import { formatReport } from "./backtest-format.js";

/** The verdicts, the skipped targets, then the report under `title`. */
export function formatHistoryReport(report: HistoryReport, title: string): string {
  const out = [`Rules from ${report.candles} candles:`];
  const width = Math.max(0, ...report.verdicts.map((v) => v.rule.length));
  for (const v of report.verdicts) out.push(`  ${v.rule.padEnd(width)}  ${v.verdict}: ${v.reason}`);
  if (report.skippedTargets.length > 0) {
    out.push("", "Targets not fed from candles:");
    for (const t of report.skippedTargets) out.push(`  ${t.target}: ${t.reason}`);
  }
  return `${out.join("\n")}\n\n${formatReport(report, title)}`;
}
