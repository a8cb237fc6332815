#!/usr/bin/env node
// Process entry point: parses the command line, wires signals and exit codes; the only module that touches `process`.
// first: its heap settings must apply before any other module runs
import "./heap-settings.js";
import type { Logger } from "pino";
import { createApp, type App } from "./app.js";
import {
  EX_CANTCREAT,
  EX_CONFIG,
  EX_IOERR,
  EX_SOFTWARE,
  EX_UNAVAILABLE,
  EX_USAGE,
  parseConfigArgs,
  type ConfigArgs,
} from "./cli/args.js";
import { runCheckConfig } from "./cli/check-config.js";
import { mainUsage, runUsage } from "./cli/main-usage.js";
import { runBacktest } from "./cli/backtest.js";
import { runRecord } from "./cli/record.js";
import { runSilence } from "./cli/silence.js";
import { runTail } from "./cli/tail.js";
import { loadConfig } from "./config/load.js";
import type { AppConfig } from "./config/types.js";
import { errorCode, isPmError } from "./domain/errors.js";
import { createLogger } from "./logger.js";
import { runSimulateCommand } from "./simulator/cli.js";
import { createSystemdNotifier } from "./systemd.js";
import { VERSION } from "./version.js";

const notifySystemd = createSystemdNotifier({ env: process.env, pid: process.pid, nowMs: Date.now });
const USAGE = mainUsage(VERSION);

const line = (text: string): string => (text.endsWith("\n") ? text : `${text}\n`);
const io = {
  stdout: (text: string) => void process.stdout.write(line(text)),
  stderr: (text: string) => void process.stderr.write(line(text)),
  env: process.env,
  cwd: process.cwd(),
};
const streams = {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  isTTY: process.stdout.isTTY === true,
};

/** Load the config for `run` (and again on SIGHUP); `--pretty` is a run-only flag. */
function load(args: ConfigArgs): AppConfig {
  return loadConfig({
    ...(args.configFile === undefined ? {} : { configFile: args.configFile }),
    env: process.env,
    argvOverrides: args.overrides,
    cwd: process.cwd(),
  }).config;
}

/** `pragma-monitor run`: start the daemon and keep it running until a signal. */
async function run(argv: readonly string[]): Promise<void> {
  const parsed = parseConfigArgs(argv.filter((arg) => arg !== "--pretty"));
  if (!parsed.ok || parsed.value.help) {
    if (!parsed.ok) io.stderr(`pragma-monitor run: ${parsed.error}`);
    (parsed.ok ? io.stdout : io.stderr)(runUsage());
    process.exitCode = parsed.ok ? 0 : EX_USAGE;
    return;
  }
  const args = parsed.value;
  let config: AppConfig;
  try {
    config = load(args);
  } catch (error) {
    io.stderr(isPmError(error, "PM_ERR_CONFIG") ? error.message : String(error));
    process.exitCode = EX_CONFIG;
    return;
  }
  const pretty = argv.includes("--pretty") || config.log.pretty;
  const logger = await createLogger({ ...config.log, pretty });
  installFatalHandlers(logger);
  const app = createApp({
    config,
    logger,
    nowMs: Date.now,
    random: Math.random,
    // a stalled loop stops the pings, so systemd restarts a daemon that stays stuck (WatchdogSec)
    onLoopHealthy: () => notifySystemd("WATCHDOG=1"),
    process: { pid: process.pid, isAlive },
  });
  try {
    await app.start();
  } catch (error) {
    const exitCode = reportStartFailure(logger, error);
    await app.stop(1_000);
    logger.flush();
    process.exitCode = exitCode;
    return;
  }
  notifySystemd("READY=1");
  installSignalHandlers(
    app,
    logger,
    args,
    () => config,
    (next) => (config = next),
  );
}

/**
 * One fatal line saying why the daemon could not start, and the exit code: 69 when another process holds
 * the port or the state directory, 73 when the state directory is unusable (operators' situations, so no
 * stack), 70 with the stack for anything unexpected.
 */
function reportStartFailure(logger: Logger, error: unknown): number {
  if (isPmError(error, "PM_ERR_LISTEN") || isPmError(error, "PM_ERR_STATE_LOCKED")) {
    logger.fatal({ code: error.code, exitCode: EX_UNAVAILABLE }, `could not start: ${error.message}`);
    return EX_UNAVAILABLE;
  }
  if (isPmError(error, "PM_ERR_STATE")) {
    const errno = errorCode(error.cause);
    logger.fatal({ code: error.code, errno, exitCode: EX_CANTCREAT }, `could not start: ${error.message}`);
    return EX_CANTCREAT;
  }
  const reason = error instanceof Error ? error.message : String(error);
  logger.fatal({ err: error, exitCode: EX_SOFTWARE }, `could not start: ${reason}`);
  return EX_SOFTWARE;
}

/**
 * SIGTERM/SIGINT drain and exit 0, or 74 when a stop step failed (a second signal or the deadline forces
 * exit 1); SIGHUP reloads the config.
 */
function installSignalHandlers(
  app: App,
  logger: Logger,
  args: ConfigArgs,
  current: () => AppConfig,
  replace: (next: AppConfig) => void,
): void {
  let stopping = false;
  let stoppedWith: number | undefined;
  const shutdown = (signal: NodeJS.Signals): void => {
    // drained already: a repeated signal (e.g. from `timeout`) is no new failure
    if (stoppedWith !== undefined) process.exit(stoppedWith);
    if (stopping) {
      logger.warn({ signal }, "second signal: exiting now");
      logger.flush();
      process.exit(1);
    }
    stopping = true;
    notifySystemd("STOPPING=1");
    const deadlineMs = current().shutdown.drainTimeoutMs;
    logger.info({ signal, deadlineMs }, "shutting down");
    const forced = setTimeout(() => {
      logger.error({ deadlineMs }, "shutdown deadline exceeded: exiting");
      logger.flush();
      process.exit(1);
    }, deadlineMs + 1_000);
    forced.unref();
    void app.stop(deadlineMs).then(({ failedSteps }) => {
      stoppedWith = failedSteps.length === 0 ? 0 : EX_IOERR;
      if (failedSteps.length === 0) logger.info("stopped");
      else logger.error({ failedSteps, exitCode: stoppedWith }, "stopped, but some stop steps failed");
      logger.flush();
      clearTimeout(forced);
      process.exitCode = stoppedWith;
    });
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  process.on("SIGHUP", () => {
    let next: AppConfig;
    try {
      next = load(args);
    } catch (error) {
      logger.error({ err: error }, "config reload rejected: keeping the running config");
      return;
    }
    replace(next);
    void app.reload(next).then(
      () => logger.info("config reloaded"),
      (error: unknown) => logger.error({ err: error }, "config reload failed"),
    );
  });
}

/** Crash loudly so the supervisor restarts us: a daemon in an unknown state is worse than a restart. */
function installFatalHandlers(logger: Logger): void {
  const die = (kind: string) => (error: unknown) => {
    logger.fatal({ err: error }, kind);
    logger.flush();
    process.exit(EX_SOFTWARE);
  };
  process.on("uncaughtException", die("uncaught exception"));
  process.on("unhandledRejection", die("unhandled rejection"));
}

/** An AbortSignal that aborts on the first of `signals` (for the interactive commands). */
function abortOn(...signals: NodeJS.Signals[]): AbortSignal {
  const controller = new AbortController();
  for (const signal of signals) process.once(signal, () => controller.abort());
  return controller.signal;
}

/** Whether a process exists (signal 0 probes without signalling; EPERM still means alive). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === "EPERM";
  }
}

/** Dispatch the sub-command. */
async function main(argv: readonly string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case "run":
      // the daemon's heap settings were applied before anything loaded (heap-settings.ts)
      return run(rest);
    case "check-config":
      process.exitCode = runCheckConfig(rest, io);
      return;
    case "simulate":
      process.exitCode = await runSimulateCommand(rest, streams, { signal: abortOn("SIGINT", "SIGTERM") });
      return;
    case "tail":
      process.exitCode = await runTail(rest, { ...streams, signal: abortOn("SIGINT") });
      return;
    case "record":
      process.exitCode = await runRecord(rest, {
        ...streams,
        cwd: process.cwd(),
        signal: abortOn("SIGINT", "SIGTERM"),
      });
      return;
    case "backtest":
      process.exitCode = await runBacktest(rest, { ...streams, cwd: process.cwd() });
      return;
    case "silence":
      process.exitCode = await runSilence(rest, { ...streams, nowMs: Date.now, signal: abortOn("SIGINT") });
      return;
    case "--version":
    case "-v":
      io.stdout(VERSION);
      return;
    case undefined:
    case "--help":
    case "-h":
    case "help":
      io.stdout(USAGE);
      return;
    default:
      io.stderr(`unknown command "${command}"\n\n${USAGE}`);
      process.exitCode = EX_USAGE;
  }
}

await main(process.argv.slice(2));
