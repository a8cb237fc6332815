// `pragma-monitor silence add|ls|expire`: create, list and expire silences through the daemon's API, as amtool does.
import { EX_DATAERR, EX_NOPERM, EX_UNAVAILABLE, EX_USAGE } from "./args.js";
import { createSilenceApi, type ApiFailure, type SilenceApi } from "./silence-api.js";
import {
  SILENCE_ADD_FLAGS,
  SILENCE_EXPIRE_FLAGS,
  SILENCE_LS_FLAGS,
  parseSilenceArgs,
  type Connection,
  type SilenceCommand,
  type SilenceSubcommand,
} from "./silence-args.js";
import { formatAddedLine, formatSilenceTable, listedSilences } from "./silence-format.js";
import { flagList, synopsis, type FlagSpecs } from "./usage.js";

/** Each subcommand: its name as the usage shows it (with its positionals) and its flags. */
export const SILENCE_COMMANDS = [
  { name: "silence add", synopsisName: "silence add MATCHER...", flags: SILENCE_ADD_FLAGS },
  { name: "silence ls", synopsisName: "silence ls", flags: SILENCE_LS_FLAGS },
  { name: "silence expire", synopsisName: "silence expire ID...", flags: SILENCE_EXPIRE_FLAGS },
] as const satisfies ReadonlyArray<{ name: string; synopsisName: string; flags: FlagSpecs }>;

const NOTES = `MATCHER is amtool's: name=value, name!=value, name=~regex, name!~regex (anchored; quote it for the
shell: 'rule=~price_.*'), over the alert's labels plus rule and severity; at least one must not match "".
The token defaults to $PM_SERVER_TOKEN. Exit codes: 0 ok, ${EX_USAGE} usage error or a silence the daemon
refuses, ${EX_DATAERR} no such silence (or already expired, a maintenance window, too many silences),
${EX_UNAVAILABLE} the daemon cannot be reached or failed, ${EX_NOPERM} token refused.`;

/** `--help` of one subcommand, or of `silence` as a whole. */
export function silenceUsage(subcommand: SilenceSubcommand | null): string {
  const commands = SILENCE_COMMANDS.filter(
    ({ name }) => subcommand === null || name === `silence ${subcommand}`,
  );
  const parts = commands.map(
    ({ synopsisName, flags }) => `${synopsis(synopsisName, flags, "usage: ")}\n${flagList(flags)}`,
  );
  return `${parts.join("\n\n")}\n${NOTES}\n`;
}

/** Where `silence` writes, what it reads instead of `process`, and its clock. */
export interface SilenceIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly nowMs: () => number;
  /** Aborts a request in flight (Ctrl-C). */
  readonly signal?: AbortSignal;
}

/** Run `pragma-monitor silence ...`; resolves with the process exit code. */
export async function runSilence(argv: readonly string[], io: SilenceIo): Promise<number> {
  const parsed = parseSilenceArgs(argv, io.env, io.nowMs());
  if (!parsed.ok) {
    const name = parsed.subcommand === null ? "silence" : `silence ${parsed.subcommand}`;
    io.stderr.write(`${name}: ${parsed.message}\n${silenceUsage(parsed.subcommand)}`);
    return EX_USAGE;
  }
  const { command } = parsed;
  if (command.kind === "help") {
    io.stdout.write(silenceUsage(command.subcommand));
    return 0;
  }
  const api = createSilenceApi(command.connection, io.signal);
  try {
    return await execute(command, api, io);
  } finally {
    await api.close();
  }
}

/** Carry out a parsed command against the API. */
async function execute(
  command: Exclude<SilenceCommand, { kind: "help" }>,
  api: SilenceApi,
  io: SilenceIo,
): Promise<number> {
  const fail = (failure: ApiFailure): number => {
    io.stderr.write(`silence ${command.kind}: ${failure.message}\n`);
    return failure.exitCode;
  };
  switch (command.kind) {
    case "add": {
      const created = await api.create(command.silence);
      if (!created.ok) return fail(created.failure);
      io.stdout.write(`${created.value}\n`);
      io.stderr.write(formatAddedLine(created.value, command.silence, io.nowMs()));
      return 0;
    }
    case "ls": {
      const listed = await api.list();
      if (!listed.ok) return fail(listed.failure);
      const shown = listedSilences(listed.value, command.all);
      io.stdout.write(
        command.json
          ? `${JSON.stringify(shown, null, 2)}\n`
          : formatSilenceTable(shown, io.nowMs(), command.all),
      );
      return 0;
    }
    case "expire":
      return expireAll(command.connection, command.ids, api, fail, io);
  }
}

/** Expire each id in turn; the first failure's exit code, stopping at once when the daemon is unreachable or refuses us. */
async function expireAll(
  connection: Connection,
  ids: readonly string[],
  api: SilenceApi,
  fail: (failure: ApiFailure) => number,
  io: SilenceIo,
): Promise<number> {
  let exitCode = 0;
  for (const [index, id] of ids.entries()) {
    const expired = await api.expire(id);
    if (expired.ok) {
      io.stdout.write(`expired ${id}\n`);
      continue;
    }
    const code = fail(expired.failure);
    if (exitCode === 0) exitCode = code;
    if (code === EX_UNAVAILABLE || code === EX_NOPERM) {
      const left = ids.slice(index + 1);
      if (left.length > 0)
        io.stderr.write(`silence expire: not tried at ${connection.url}: ${left.join(" ")}\n`);
      break;
    }
  }
  return exitCode;
}
