// Both backtest modes end alike: build each config's report, print one run or two side by side (text or --json),
// write them as one HTML page when asked, and exit by completeness.
import { EX_CANTCREAT, writeHtmlReport, type HtmlRun } from "../backtest/html-report.js";
import type { BacktestReport } from "../backtest/summary.js";
import type { AppConfig } from "../config/types.js";
import { EX_DATAERR, EX_USAGE } from "./args.js";
import { formatComparison } from "./backtest-format.js";

/** How the runs are printed. */
export interface RunsOutput<R extends BacktestReport> {
  readonly json: boolean;
  /** Where the HTML report (of both runs with --compare) goes, when asked. */
  readonly html?: string;
  /** The two configs' names (--config, --compare). */
  readonly names: readonly [string, string];
  /** The heading of a single run. */
  readonly title: string;
  readonly format: (report: R, title: string) => string;
}

/** A built run: its report, and the replay's prices (kept only when an HTML report is asked) and transitions. */
export interface BuiltRun<R extends BacktestReport> {
  readonly report: R;
  readonly result: HtmlRun["result"];
}

/** Build each config's run with `build` (told whether to keep prices for a chart), print them, and return the exit code. */
export function printRuns<R extends BacktestReport>(
  configs: readonly AppConfig[],
  build: (config: AppConfig, keepPrices: boolean) => BuiltRun<R>,
  output: RunsOutput<R>,
  io: {
    readonly stdout: { write(text: string): unknown };
    readonly stderr: { write(text: string): unknown };
  },
): number {
  let reports: R[];
  try {
    const runs = configs.map((config) => ({ config, ...build(config, output.html !== undefined) }));
    reports = runs.map((run) => run.report);
    const html = output.html;
    if (html !== undefined)
      writeHtmlReport(
        html,
        runs.length > 1 ? `${output.title}: A vs B` : output.title,
        runs.map((run, i) => ({ ...run, name: output.names[i] ?? "" })),
      );
  } catch (error) {
    io.stderr.write(`pragma-monitor backtest: ${error instanceof Error ? error.message : String(error)}\n`);
    return EX_CANTCREAT;
  }
  const [a, b] = reports;
  if (a === undefined) return EX_USAGE;
  const { names, format } = output;
  if (output.json) io.stdout.write(`${JSON.stringify(b === undefined ? a : { runs: [a, b] }, null, 2)}\n`);
  else if (b === undefined) io.stdout.write(format(a, output.title));
  else {
    io.stdout.write(format(a, `A: ${names[0]}`));
    io.stdout.write(`\n${format(b, `B: ${names[1]}`)}\n`);
    io.stdout.write(formatComparison(a, b, names));
  }
  return reports.every((r) => r.complete) ? 0 : EX_DATAERR;
}
