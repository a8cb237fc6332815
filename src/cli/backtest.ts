// `pragma-monitor backtest`: replay a recording through the daemon's engine under a config, and say what it would have sent.
import { readRecording, recordingFiles } from "../backtest/reader.js";
import { replayRecording, type ReplayResult } from "../backtest/replay.js";
import { EX_CANTCREAT } from "../backtest/html-report.js";
import { summarise, type BacktestReport } from "../backtest/summary.js";
import type { AppConfig } from "../config/types.js";
import { isPmError } from "../domain/errors.js";
import { EX_CONFIG, EX_DATAERR, EX_USAGE, parseFlags, usageExit } from "./args.js";
import { loadBacktestConfig } from "./backtest-config.js";
import { formatReport } from "./backtest-format.js";
import { printRuns, type BuiltRun } from "./backtest-output.js";
import { flagList, synopsis, type FlagSpecs } from "./usage.js";
import { CANDLE_INTERVALS, type CandleInterval } from "../upstream/server-rules.js";
import { EX_UNAVAILABLE, runHistoryBacktest } from "./backtest-history.js";
import { createProgress, withProgress } from "./progress.js";

/** The recording cannot be read at all (sysexits EX_NOINPUT). */
export const EX_NOINPUT = 66;

/** The flags of `backtest`. */
export const BACKTEST_FLAGS = {
  config: { type: "string", short: "c", value: "FILE", doc: "JSON config whose rules and sinks are tested" },
  recording: {
    type: "string",
    short: "r",
    value: "DIR",
    doc: "a recording (pragma-monitor record, or `recording`); without it, --from and --to read candles",
  },
  from: { type: "string", value: "T", doc: "start (ISO 8601 or unix ms); default: the recording's start" },
  to: { type: "string", value: "T", doc: "end (ISO 8601 or unix ms); default: the recording's end" },
  candles: {
    type: "string",
    value: "INTERVAL",
    doc: `history mode: candle size (${CANDLE_INTERVALS.join(", ")}; default 1min)`,
  },
  json: { type: "boolean", doc: "print one JSON document (byte-identical for the same inputs)" },
  set: {
    type: "string",
    multiple: true,
    value: "K=V",
    doc: "override a key; rules.<id>.<field>=VALUE changes one rule (e.g. rules.price_change_10s.threshold=0.03)",
  },
  compare: { type: "string", value: "FILE", doc: "a second config: both runs side by side, pages per sink" },
  html: {
    type: "string",
    value: "FILE",
    doc: "also write a self-contained HTML report (price charts with transitions; with --compare, of both runs)",
  },
  help: { type: "boolean", short: "h", doc: "print this help" },
} as const satisfies FlagSpecs;

const USAGE = `${synopsis("backtest", BACKTEST_FLAGS, "usage: ")}
${flagList(BACKTEST_FLAGS)}
Nothing is sent and nothing is written to state.dir. Exit codes: 0 complete, ${EX_USAGE} usage error (e.g. --from after
--to), ${EX_DATAERR} incomplete (damaged lines, bodies the decoders reject, targets missing, pairs without candles:
listed under Problems), ${EX_NOINPUT} recording unreadable, ${EX_UNAVAILABLE} upstream unusable (history mode),
${EX_CANTCREAT} the --html file cannot be written, ${EX_CONFIG} invalid configuration.`;

/** What `backtest` needs from its process. */
export interface BacktestIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

/** Parsed flags. */
interface BacktestArgs {
  readonly configFile?: string;
  /** Absent: history mode (candles over --from..--to). */
  readonly recording?: string;
  readonly candles: CandleInterval;
  readonly fromMs?: number;
  readonly toMs?: number;
  readonly json: boolean;
  readonly sets: readonly string[];
  readonly compare?: string;
  readonly html?: string;
}

/** A time flag: ISO 8601 or unix milliseconds. */
function parseTime(name: string, text: string | undefined): number | undefined | string {
  if (text === undefined) return undefined;
  const ms = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  return Number.isFinite(ms) ? ms : `--${name}: "${text}" is neither an ISO 8601 time nor unix milliseconds`;
}

/** Parse argv; a string is a usage error. */
function parseBacktestArgs(argv: readonly string[]): BacktestArgs | { readonly help: true } | string {
  const values = parseFlags(argv, BACKTEST_FLAGS);
  if (typeof values === "string") return values;
  if (values.help === true) return { help: true };
  const fromMs = parseTime("from", values.from);
  const toMs = parseTime("to", values.to);
  if (typeof fromMs === "string") return fromMs;
  if (typeof toMs === "string") return toMs;
  if (fromMs !== undefined && toMs !== undefined && fromMs > toMs)
    return `--from (${values.from}) is after --to (${values.to})`;
  const recording = values.recording === "" ? undefined : values.recording;
  if (recording === undefined && (fromMs === undefined || toMs === undefined))
    return "--recording DIR, or --from T and --to T (candles), is required";
  const candles = values.candles ?? "1min";
  if (!(CANDLE_INTERVALS as readonly string[]).includes(candles))
    return `--candles: "${candles}" is not a candle interval (${CANDLE_INTERVALS.join(", ")})`;
  return {
    ...(values.config === undefined ? {} : { configFile: values.config }),
    ...(recording === undefined ? {} : { recording }),
    candles: candles as CandleInterval,
    ...(fromMs === undefined ? {} : { fromMs }),
    ...(toMs === undefined ? {} : { toMs }),
    json: values.json === true,
    sets: values.set ?? [],
    ...(values.compare === undefined ? {} : { compare: values.compare }),
    ...(values.html === undefined ? {} : { html: values.html }),
  };
}

/** Run `pragma-monitor backtest`; returns the exit code (a promise in history mode). */
export function runBacktest(argv: readonly string[], io: BacktestIo): number | Promise<number> {
  const args = parseBacktestArgs(argv);
  const exit = usageExit("backtest", args, USAGE, io);
  if (exit !== undefined || typeof args === "string" || "help" in args) return exit ?? EX_USAGE;
  let configs: AppConfig[];
  try {
    const source = { env: io.env, cwd: io.cwd, sets: args.sets };
    configs = [
      loadBacktestConfig({
        ...source,
        ...(args.configFile === undefined ? {} : { configFile: args.configFile }),
      }),
    ];
    if (args.compare !== undefined) configs.push(loadBacktestConfig({ ...source, configFile: args.compare }));
  } catch (error) {
    io.stderr.write(`${isPmError(error, "PM_ERR_CONFIG") ? error.message : String(error)}\n`);
    return EX_CONFIG;
  }
  if (args.recording === undefined)
    return runHistoryBacktest(configs, { ...args, fromMs: args.fromMs ?? 0, toMs: args.toMs ?? 0 }, io);
  const recording = args.recording;
  try {
    if (recordingFiles(recording).length === 0) throw new Error(`no recording files in ${recording}`);
  } catch (error) {
    io.stderr.write(`pragma-monitor backtest: ${error instanceof Error ? error.message : String(error)}\n`);
    return EX_NOINPUT;
  }
  const names = [args.configFile ?? "default config", args.compare ?? ""] as const;
  return printRuns(
    configs,
    (config, keepPrices) => report(config, recording, args, io.stderr, keepPrices),
    {
      json: args.json,
      ...(args.html === undefined ? {} : { html: args.html }),
      names,
      title: `Backtest of ${recording}`,
      format: formatReport,
    },
    io,
  );
}

/** One run: replay the recording under `config` and summarise it (keeping the prices for an HTML chart when asked). */
function report(
  config: AppConfig,
  recording: string,
  args: BacktestArgs,
  stderr: BacktestIo["stderr"],
  keepPrices: boolean,
): BuiltRun<BacktestReport> {
  const progress = createProgress(stderr, "replaying recording");
  const files = recordingFiles(recording).length;
  const items = withProgress(readRecording(recording), (item) => item.at.file, files, progress);
  const result: ReplayResult = replayRecording(items, config, {
    keepPrices,
    ...(args.fromMs === undefined ? {} : { fromMs: args.fromMs }),
    ...(args.toMs === undefined ? {} : { toMs: args.toMs }),
  });
  const summary = summarise(result, config.rules, new Set(Object.keys(config.alerts.externalLabels)));
  return { report: summary, result };
}
