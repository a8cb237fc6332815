// Both backtest modes end alike: build each config's report (the first one's also as HTML), print one run or two
// side by side (text or --json), and exit by completeness.
import { EX_CANTCREAT } from "../backtest/html-report.js";
import type { BacktestReport } from "../backtest/summary.js";
import type { AppConfig } from "../config/types.js";
import { EX_DATAERR, EX_USAGE } from "./args.js";
import { formatComparison } from "./backtest-format.js";

/** How the runs are printed. */
export interface RunsOutput<R extends BacktestReport> {
  readonly json: boolean;
  /** Where the first run's HTML report goes, when asked. */
  readonly html?: string;
  /** The two configs' names (--config, --compare). */
  readonly names: readonly [string, string];
  /** The heading of a single run. */
  readonly title: string;
  readonly format: (report: R, title: string) => string;
}

/** Build each config's report with `build` (given the HTML file for the first), print them, and return the exit code. */
export function printRuns<R extends BacktestReport>(
  configs: readonly AppConfig[],
  build: (config: AppConfig, htmlFile: string | undefined) => R,
  output: RunsOutput<R>,
  io: {
    readonly stdout: { write(text: string): unknown };
    readonly stderr: { write(text: string): unknown };
  },
): number {
  let reports: R[];
  try {
    reports = configs.map((config, i) => build(config, i === 0 ? output.html : undefined));
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
