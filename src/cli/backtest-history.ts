// `pragma-monitor backtest --from T --to T [--candles 1min]`: candles from the configured upstream (the embedded
// simulator when upstream.url is "simulator", as for run and record), fed through the daemon's engine.
import type { Candle } from "../domain/types.js";
import { INTERVAL_MS } from "../domain/types.js";
import type { AppConfig } from "../config/types.js";
import {
  candleTargets,
  fetchCandleHistory,
  replayCandles,
  ruleVerdicts,
  type CandleHistory,
  type CandleRange,
  type RuleVerdict,
  type SkippedTarget,
} from "../backtest/history.js";
import { summarise, type BacktestReport } from "../backtest/summary.js";
import { openUpstreamClient } from "../app.js";
import type { CandleInterval } from "../upstream/server-rules.js";
import { printRuns, type BuiltRun } from "./backtest-output.js";
import { formatHistoryReport } from "./backtest-history-format.js";
import { createProgress, type ProgressStream } from "./progress.js";

/** The upstream could not be used at all (sysexits EX_UNAVAILABLE). */
export const EX_UNAVAILABLE = 69;

/** What a history run needs from its process. */
interface HistoryIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: ProgressStream;
}

/** The flags a history run reads. */
interface HistoryArgs extends HistoryRequest {
  readonly json: boolean;
  readonly configFile?: string;
  readonly compare?: string;
  readonly html?: string;
}

/** Fetch once, replay under each config (one, or two with --compare), print; resolves with the exit code. */
export async function runHistoryBacktest(
  configs: readonly AppConfig[],
  args: HistoryArgs,
  io: HistoryIo,
): Promise<number> {
  let history: CandleHistory;
  try {
    history = await fetchHistory(configs, args, io.stderr);
  } catch (error) {
    io.stderr.write(
      `pragma-monitor backtest: cannot read candles: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return EX_UNAVAILABLE;
  }
  const names = [args.configFile ?? "default config", args.compare ?? ""] as const;
  return printRuns(
    configs,
    (config, keepPrices) => historyReport(history, config, args, io.stderr, keepPrices),
    {
      json: args.json,
      ...(args.html === undefined ? {} : { html: args.html }),
      names,
      title: `Backtest of ${args.candles} candles`,
      format: formatHistoryReport,
    },
    io,
  );
}

/** The report of a history run: the rules' candle verdicts and the targets left out, then the usual report. */
export type HistoryReport = BacktestReport & {
  readonly candles: CandleInterval;
  readonly verdicts: readonly RuleVerdict[];
  readonly skippedTargets: readonly SkippedTarget[];
};

/** What a history run is asked. */
export interface HistoryRequest {
  readonly fromMs: number;
  readonly toMs: number;
  readonly candles: CandleInterval;
}

/** Fetch the candles `configs` need from the first config's upstream (pairs of all configs, once each). */
export async function fetchHistory(
  configs: readonly AppConfig[],
  request: HistoryRequest,
  stderr: ProgressStream,
): Promise<CandleHistory> {
  const [first] = configs;
  if (first === undefined) return { candles: new Map(), problems: [] };
  const upstream = await openUpstreamClient(first);
  const progress = createProgress(stderr, "fetching candles");
  try {
    const fed = configs.flatMap((config) => candleTargets(config).fed);
    const readPage = async (pair: string, atMs: number): Promise<readonly Candle[]> => {
      const series = await upstream.client.getCandlesticks({
        pair,
        entryType: "spot",
        aggregation: "median",
        interval: request.candles,
        timestampS: Math.floor(atMs / 1000),
      });
      return series.candles;
    };
    return await fetchCandleHistory(readPage, fed, rangeOf(request), (done, total) =>
      progress.update(done, total),
    );
  } finally {
    progress.end();
    await upstream.close();
  }
}

/** Replay the fetched candles under `config` and build its report (keeping the prices for an HTML chart when asked). */
export function historyReport(
  history: CandleHistory,
  config: AppConfig,
  request: HistoryRequest,
  stderr: ProgressStream,
  keepPrices: boolean,
): BuiltRun<HistoryReport> {
  const range = rangeOf(request);
  const progress = createProgress(stderr, "replaying candles");
  const result = replayCandles(
    history,
    config,
    range,
    (atMs) => progress.update(atMs - range.fromMs, range.toMs - range.fromMs),
    keepPrices,
  );
  progress.end();
  const summary = summarise(result, config.rules, new Set(Object.keys(config.alerts.externalLabels)));
  const report = {
    candles: request.candles,
    verdicts: ruleVerdicts(config.rules, range.candleMs),
    skippedTargets: candleTargets(config).skipped,
    ...summary,
  };
  return { report, result };
}

/** The range in milliseconds with the candle size. */
function rangeOf(request: HistoryRequest): CandleRange {
  return { fromMs: request.fromMs, toMs: request.toMs, candleMs: INTERVAL_MS[request.candles] };
}
