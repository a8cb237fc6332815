// `pragma-monitor check-config`: validate the layered configuration and print it with secrets redacted.
import { isPmError } from "../domain/errors.js";
import { maintenanceSilenceId, maintenanceSilences, type MaintenanceWindow } from "../domain/maintenance.js";
import { formatMatchers, silenceState } from "../domain/silence.js";
import { loadConfig } from "../config/load.js";
import { adaptationNotes } from "../config/notes.js";
import { problemsOf } from "../config/problems.js";
import { warmupNotes } from "../pipeline/warmup.js";
import { configWarnings } from "../config/warnings.js";
import { CONFIG_FLAGS, CONFIG_FLAGS_USAGE, EX_CONFIG, EX_USAGE, parseConfigArgs } from "./args.js";
import { synopsis } from "./usage.js";

/** Where check-config writes and what it reads instead of `process`. */
export interface CheckConfigIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** The clock the maintenance windows' next occurrences are computed from (default Date.now). */
  readonly nowMs?: () => number;
}

const USAGE = `${synopsis("check-config", CONFIG_FLAGS, "usage: ")}
${CONFIG_FLAGS_USAGE}
Prints the effective configuration as JSON (secrets redacted) and exits 0, with a "note:" line on
stderr for each request the daemon adapts to the live server's rules and for each reason targets are
not warmed from candles (their count, first ids and config keys), risky settings as
"warning: key: reason", and a "maintenance:" line per maintenance window with its occurrence active now or
next (in its time zone and UTC); on a problem, lists each as "key: reason" on stderr and exits 78.`;

/** Run check-config; returns the exit code (0 valid, 64 usage, 78 invalid configuration). */
export function runCheckConfig(argv: readonly string[], io: CheckConfigIo): number {
  const args = parseConfigArgs(argv);
  if (!args.ok) {
    io.stderr(`pragma-monitor check-config: ${args.error}\n${USAGE}\n`);
    return EX_USAGE;
  }
  if (args.value.help) {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  try {
    const loaded = loadConfig({
      env: io.env,
      cwd: io.cwd,
      argvOverrides: args.value.overrides,
      ...(args.value.configFile === undefined ? {} : { configFile: args.value.configFile }),
    });
    io.stdout(`${JSON.stringify(loaded.redacted(), null, 2)}\n`);
    const { monitors, rules, upstream } = loaded.config;
    for (const note of [...adaptationNotes(monitors, upstream.transport), ...warmupNotes(monitors, rules)])
      io.stderr(`note: ${note}\n`);
    for (const warning of configWarnings(loaded.config))
      io.stderr(`warning: ${warning.key}: ${warning.reason}\n`);
    for (const line of maintenanceLines(loaded.config.maintenance, (io.nowMs ?? Date.now)()))
      io.stderr(`${line}\n`);
    io.stderr(`configuration OK (${loaded.sources.join(" < ")})\n`);
    return 0;
  } catch (error) {
    if (!isPmError(error, "PM_ERR_CONFIG")) throw error;
    const lines = problemsOf(error).map((p) => `${p.key}: ${p.reason}`);
    const count = lines.length === 1 ? "1 problem" : `${lines.length} problems`;
    io.stderr(
      `pragma-monitor: invalid configuration (${count}):\n${lines.map((l) => `  ${l}`).join("\n")}\n`,
    );
    return EX_CONFIG;
  }
}

/**
 * One line per maintenance window: the occurrence active now or next, on the window's wall clock and in UTC, and its
 * matchers, so an operator sees the schedule read as meant (time zone, midnight, DST) before the daemon runs it.
 */
export function maintenanceLines(windows: readonly MaintenanceWindow[], nowMs: number): string[] {
  const silences = maintenanceSilences(windows, nowMs);
  return windows.map((window) => {
    const silence = silences.find((candidate) => candidate.id === maintenanceSilenceId(window.name));
    if (silence === undefined) return `maintenance: ${window.name} never occurs again`;
    const local = new Intl.DateTimeFormat("sv-SE", {
      timeZone: window.timeZone,
      dateStyle: "short",
      timeStyle: "short",
    });
    const wall = (iso: string) => local.format(Date.parse(iso));
    return [
      `maintenance: ${window.name} ${silenceState(silence, nowMs)}`,
      `${wall(silence.startsAt)} → ${wall(silence.endsAt)} ${window.timeZone}`,
      `(${silence.startsAt} → ${silence.endsAt})`,
      formatMatchers(silence.matchers),
    ].join(" ");
  });
}
