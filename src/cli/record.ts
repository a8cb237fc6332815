// `pragma-monitor record`: poll the configured targets and record every upstream response, without alerting anyone.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Logger } from "pino";
import { createApp } from "../app.js";
import { loadConfig } from "../config/load.js";
import { isPmError } from "../domain/errors.js";
import { createLogger } from "../logger.js";
import {
  EX_CONFIG,
  EX_IOERR,
  EX_SOFTWARE,
  EX_USAGE,
  parseAssignments,
  parseFlags,
  usageExit,
} from "./args.js";
import { flagList, synopsis, type FlagSpecs } from "./usage.js";

/** The flags of `record`. */
export const RECORD_FLAGS = {
  config: { type: "string", short: "c", value: "FILE", doc: "JSON config file (its monitors and upstream)" },
  out: { type: "string", short: "o", value: "DIR", doc: "directory of the recording (created if missing)" },
  duration: {
    type: "string",
    value: "MS",
    doc: "stop after this many milliseconds (default: until Ctrl-C or SIGTERM)",
  },
  set: { type: "string", multiple: true, value: "KEY=VALUE", doc: "override one config key (as for run)" },
  help: { type: "boolean", short: "h", doc: "print this help" },
} as const satisfies FlagSpecs;

const USAGE = `${synopsis("record", RECORD_FLAGS, "usage: ")}
${flagList(RECORD_FLAGS)}
Runs the daemon's pipeline with recording on (docs/recording.md): no sink is called, the HTTP port is any free
one and alert state lives in a temporary directory. Exit codes: 0 stopped, ${EX_USAGE} usage error, ${EX_CONFIG} invalid
configuration, ${EX_IOERR} the recording could not be written completely, ${EX_SOFTWARE} could not start.`;

/** What `record` needs from its process. */
export interface RecordIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Aborting stops the recording (main.ts aborts on SIGINT and SIGTERM). */
  readonly signal: AbortSignal;
  /** The logger (tests pass one writing to memory); default: JSON lines on stderr. */
  readonly logger?: Logger;
}

/** Parsed flags of `record`. */
interface RecordArgs {
  readonly configFile?: string;
  readonly out: string;
  readonly durationMs: number | null;
  readonly overrides: Record<string, string>;
}

/** Parse argv; a string is a usage error. */
function parseRecordArgs(argv: readonly string[]): RecordArgs | { readonly help: true } | string {
  const values = parseFlags(argv, RECORD_FLAGS);
  if (typeof values === "string") return values;
  if (values.help === true) return { help: true };
  if (values.out === undefined || values.out === "") return "--out DIR is required";
  const durationMs = values.duration === undefined ? null : Number(values.duration);
  if (durationMs !== null && !(Number.isInteger(durationMs) && durationMs > 0))
    return `--duration expects a positive integer (ms), got "${values.duration}"`;
  const overrides = parseAssignments(values.set);
  if (typeof overrides === "string") return overrides;
  return {
    ...(values.config === undefined ? {} : { configFile: values.config }),
    out: values.out,
    durationMs,
    overrides,
  };
}

/** Run `pragma-monitor record`; resolves with the exit code. */
export async function runRecord(argv: readonly string[], io: RecordIo): Promise<number> {
  const args = parseRecordArgs(argv);
  const exit = usageExit("record", args, USAGE, io);
  if (exit !== undefined || typeof args === "string" || "help" in args) return exit ?? EX_USAGE;
  const stateDir = mkdtempSync(join(tmpdir(), "pm-record-"));
  try {
    return await record(args, io, stateDir);
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** Load the config with recording on and sinks off, run until stopped, report what was written. */
async function record(args: RecordArgs, io: RecordIo, stateDir: string): Promise<number> {
  let config;
  try {
    config = loadConfig({
      ...(args.configFile === undefined ? {} : { configFile: args.configFile }),
      env: io.env,
      cwd: io.cwd,
      argvOverrides: {
        ...args.overrides,
        "recording.enabled": "true",
        "recording.dir": resolve(io.cwd, args.out),
        sinks: "[]",
        "server.port": "0",
        "state.dir": stateDir,
      },
    }).config;
  } catch (error) {
    io.stderr.write(`${isPmError(error, "PM_ERR_CONFIG") ? error.message : String(error)}\n`);
    return EX_CONFIG;
  }
  const logger =
    io.logger ?? (await createLogger({ ...config.log, pretty: false }, { write: (t) => io.stderr.write(t) }));
  const app = createApp({ config, logger, nowMs: Date.now, random: Math.random });
  try {
    await app.start();
  } catch (error) {
    logger.fatal({ err: error }, "could not start recording");
    await app.stop(1_000);
    return EX_SOFTWARE;
  }
  await stopped(io.signal, args.durationMs);
  const report = await app.stop(config.shutdown.drainTimeoutMs);
  const lines = await app.metrics.recordingLines.get();
  const count = (outcome: string): number =>
    lines.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  io.stdout.write(
    `recorded ${count("written")} lines to ${config.recording.dir} (${count("dropped")} dropped, ${count("error")} write errors)\n`,
  );
  return report.failedSteps.length > 0 || count("dropped") + count("error") > 0 ? EX_IOERR : 0;
}

/** Resolves when the signal aborts or the duration has passed. */
function stopped(signal: AbortSignal, durationMs: number | null): Promise<void> {
  return new Promise((resolveStop) => {
    if (signal.aborted) return resolveStop();
    const timer = durationMs === null ? undefined : setTimeout(resolveStop, durationMs);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolveStop();
    });
  });
}
