// Shared argv parsing: --config and --set for the commands that load the configuration (`run`, `check-config`,
// `record`, `backtest`), strict flag parsing and the usage-error / --help outcome of every subcommand.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { flagList, type FlagSpecs } from "./usage.js";

/** sysexits codes the CLI uses. */
export const EX_USAGE = 64;
/** `silence`: the daemon refused to change that silence (no such silence, already expired, a maintenance window, too many). */
export const EX_DATAERR = 65;
/** A resource is held by another process: the HTTP port is in use, or another daemon locks `state.dir`. */
export const EX_UNAVAILABLE = 69;
/** Internal error: an uncaught exception, or a start that failed for an unexpected reason. */
export const EX_SOFTWARE = 70;
/** The state directory cannot be created, written or read (permissions, not a directory, read-only, full). */
export const EX_CANTCREAT = 73;
/** The daemon stopped, but a stop step failed (alert state not saved, a sink not stopped cleanly, ...). */
export const EX_IOERR = 74;
/** `tail`, `silence`: the server refused the token. */
export const EX_NOPERM = 77;
export const EX_CONFIG = 78;

/** What `--config FILE` and repeated `--set key=value` flags asked for. */
export interface ConfigArgs {
  readonly configFile?: string;
  /** Dotted keys → raw text, later flags win: {"server.port": "0"}. */
  readonly overrides: Readonly<Record<string, string>>;
  readonly help: boolean;
}

/** Parse outcome: the arguments, or a usage error message. */
export type ConfigArgsResult =
  { readonly ok: true; readonly value: ConfigArgs } | { readonly ok: false; readonly error: string };

/** The flags parseConfigArgs understands (`run` and `check-config`); usage text is generated from them. */
export const CONFIG_FLAGS = {
  config: {
    type: "string",
    short: "c",
    value: "FILE",
    doc: "JSON config file layered over config/default.json",
  },
  set: {
    type: "string",
    multiple: true,
    value: "KEY=VALUE",
    doc: "override one key (dotted, e.g. --set server.port=0); repeatable; arrays as JSON",
  },
  help: { type: "boolean", short: "h", doc: "print this help" },
} as const satisfies FlagSpecs;

/** `run` also takes --pretty, which main.ts takes out of argv before parseConfigArgs. */
export const RUN_FLAGS = {
  ...CONFIG_FLAGS,
  pretty: { type: "boolean", doc: "human-readable logs (pino-pretty) instead of JSON lines" },
} as const satisfies FlagSpecs;

/** Usage lines describing the flags parseConfigArgs understands. */
export const CONFIG_FLAGS_USAGE = flagList(CONFIG_FLAGS);

/** Parse `--config FILE`, `--set key=value` (repeatable) and `--help`; anything else is a usage error. */
export function parseConfigArgs(argv: readonly string[]): ConfigArgsResult {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: CONFIG_FLAGS,
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  const overrides = parseAssignments(parsed.values.set);
  if (typeof overrides === "string") return { ok: false, error: overrides };
  const { config } = parsed.values;
  if (config === "") return { ok: false, error: "--config expects a file path" };
  return {
    ok: true,
    value: {
      ...(config === undefined ? {} : { configFile: config }),
      overrides,
      help: parsed.values.help === true,
    },
  };
}

/** Repeated `--set KEY=VALUE` as dotted keys → raw text (later flags win); a string is the usage error. */
export function parseAssignments(sets: readonly string[] | undefined): Record<string, string> | string {
  const overrides: Record<string, string> = {};
  for (const assignment of sets ?? []) {
    const at = assignment.indexOf("=");
    if (at <= 0) return `--set expects KEY=VALUE, got "${assignment}"`;
    overrides[assignment.slice(0, at).trim()] = assignment.slice(at + 1);
  }
  return overrides;
}

/** A subcommand's flags, parsed strictly (no positionals): their values, or the usage error as a string. */
export function parseFlags<const T extends NonNullable<ParseArgsConfig["options"]>>(
  argv: readonly string[],
  options: T,
) {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * The exit of a subcommand whose parse ended in a usage error (message and usage on stderr, EX_USAGE) or in
 * `--help` (usage on stdout, 0); undefined when it goes on.
 */
export function usageExit(
  command: string,
  parsed: string | { readonly help: true } | object,
  usage: string,
  io: {
    readonly stdout: { write(text: string): unknown };
    readonly stderr: { write(text: string): unknown };
  },
): number | undefined {
  if (typeof parsed === "string") {
    io.stderr.write(`pragma-monitor ${command}: ${parsed}\n${usage}\n`);
    return EX_USAGE;
  }
  if ("help" in parsed && parsed.help === true) {
    io.stdout.write(`${usage}\n`);
    return 0;
  }
  return undefined;
}
