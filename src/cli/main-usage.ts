// The usage text of `pragma-monitor` and of `run`, generated from each command's flag table so it cannot drift.
import { TAIL_FLAGS } from "./tail-args.js";
import { CONFIG_FLAGS, EX_CONFIG, EX_NOPERM, EX_USAGE, RUN_FLAGS } from "./args.js";
import { SIMULATE_FLAGS } from "../simulator/cli.js";
import { flagList, synopsis } from "./usage.js";

/** Every command with its flags and what it is for, in the order the usage lists them. */
export const COMMANDS = [
  { name: "run", flags: RUN_FLAGS, doc: "run the daemon" },
  {
    name: "check-config",
    flags: CONFIG_FLAGS,
    doc: "validate and print the effective config (secrets redacted)",
  },
  { name: "simulate", flags: SIMULATE_FLAGS, doc: "run the embedded Pragma API simulator on its own" },
  { name: "tail", flags: TAIL_FLAGS, doc: "a live view of the daemon's alerts over its WebSocket API" },
] as const;

/** `pragma-monitor --help`: every command's synopsis, then the exit codes. */
export function mainUsage(version: string): string {
  const commands = COMMANDS.map(({ name, flags, doc }) => `${synopsis(name, flags, "  ")}\n      ${doc}`);
  return `pragma-monitor ${version}: streaming price monitor for the Pragma oracle API

Usage:
${commands.join("\n")}
  pragma-monitor --version | --help

\`pragma-monitor <command> --help\` describes a command's flags. Exit codes: 0 ok, 1 forced stop,
${EX_USAGE} usage error, 70 crash, ${EX_NOPERM} token refused (tail), ${EX_CONFIG} invalid configuration.
`;
}

/** `pragma-monitor run --help`. */
export function runUsage(): string {
  return `${synopsis("run", RUN_FLAGS, "usage: ")}\n${flagList(RUN_FLAGS)}\n`;
}
