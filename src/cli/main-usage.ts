// The usage text of `pragma-monitor` and of `run`, generated from each command's flag table so it cannot drift.
import { TAIL_FLAGS } from "./tail-args.js";
import {
  CONFIG_FLAGS,
  EX_CONFIG,
  EX_DATAERR,
  EX_NOPERM,
  EX_UNAVAILABLE,
  EX_USAGE,
  RUN_FLAGS,
} from "./args.js";
import { SILENCE_ADD_FLAGS, SILENCE_EXPIRE_FLAGS, SILENCE_LS_FLAGS } from "./silence-args.js";
import { SIMULATE_FLAGS } from "../simulator/cli.js";
import { flagList, synopsis } from "./usage.js";
import { RECORD_FLAGS } from "./record.js";
import { BACKTEST_FLAGS } from "./backtest.js";

/** Every command with its flags and what it is for, in the order the usage lists them. */
export const COMMANDS = [
  { name: "run", flags: RUN_FLAGS, doc: "run the daemon" },
  {
    name: "check-config",
    flags: CONFIG_FLAGS,
    doc: "validate and print the effective config (secrets redacted)",
  },
  { name: "simulate", flags: SIMULATE_FLAGS, doc: "run the embedded Pragma API simulator on its own" },
  {
    name: "record",
    flags: RECORD_FLAGS,
    doc: "poll the configured targets and record every upstream response (no secrets), for backtest",
  },
  {
    name: "backtest",
    flags: BACKTEST_FLAGS,
    doc: "replay a recording through the alert engine: what each rule and sink would have done",
  },
  { name: "tail", flags: TAIL_FLAGS, doc: "a live view of the daemon's alerts over its WebSocket API" },
  {
    name: "silence add MATCHER...",
    flags: SILENCE_ADD_FLAGS,
    doc: "silence the alerts the matchers select (e.g. pair=BTC/USD rule=price_change); prints its id",
  },
  { name: "silence ls", flags: SILENCE_LS_FLAGS, doc: "list the silences and maintenance windows" },
  { name: "silence expire ID...", flags: SILENCE_EXPIRE_FLAGS, doc: "end silences now" },
] as const;

/** `pragma-monitor --help`: every command's synopsis, then the exit codes. */
export function mainUsage(version: string): string {
  const commands = COMMANDS.map(({ name, flags, doc }) => `${synopsis(name, flags, "  ")}\n      ${doc}`);
  return `pragma-monitor ${version}: streaming price monitor for the Pragma oracle API

Usage:
${commands.join("\n")}
  pragma-monitor --version | --help

\`pragma-monitor <command> --help\` describes a command's flags. Exit codes: 0 ok, 1 forced stop,
${EX_USAGE} usage error, ${EX_DATAERR} silence refused (no such silence, already expired, ...), ${EX_UNAVAILABLE} port or
state.dir held by another process (run) or daemon unreachable (silence), 70 crash, ${EX_NOPERM} token refused
(tail, silence), ${EX_CONFIG} invalid configuration.
`;
}

/** `pragma-monitor run --help`. */
export function runUsage(): string {
  return `${synopsis("run", RUN_FLAGS, "usage: ")}\n${flagList(RUN_FLAGS)}\n`;
}
