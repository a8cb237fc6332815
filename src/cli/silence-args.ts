// `pragma-monitor silence add|ls|expire` arguments: the flags (usage text is generated from them) and their parsers.
import { parseArgs } from "node:util";
import { matchersProblem, parseMatcher, silenceProblem, type SilenceMatcher } from "../domain/silence.js";
import { DEFAULT_URL as TAIL_DEFAULT_URL } from "./tail-args.js";
import type { FlagSpecs } from "./usage.js";

/** The daemon's HTTP address: where `tail` connects by default, over HTTP. */
export const DEFAULT_API_URL = new URL(TAIL_DEFAULT_URL.replace(/^ws/, "http")).origin;
/** How long a silence lasts when neither --for nor --until is given. */
export const DEFAULT_SILENCE_DURATION = "1h";

/** Where the daemon is and how to authenticate: the same flags and fallback as `tail`. */
const CONNECTION_FLAGS = {
  url: { type: "string", default: DEFAULT_API_URL, value: "http://HOST:PORT", doc: "the daemon's HTTP API" },
  token: { type: "string", value: "T", doc: "bearer token (default $PM_SERVER_TOKEN)" },
} as const satisfies FlagSpecs;
const HELP = { help: { type: "boolean", short: "h", doc: "print this help" } } as const satisfies FlagSpecs;

/** The flags of `silence add`, in the order its usage lists them. */
export const SILENCE_ADD_FLAGS = {
  for: {
    type: "string",
    value: "DURATION",
    doc: `how long from the start: 30m, 2h, 1d12h, 1w (default ${DEFAULT_SILENCE_DURATION})`,
  },
  until: { type: "string", value: "ISO", doc: "end instead of --for, e.g. 2026-11-26T18:00:00Z" },
  start: { type: "string", value: "ISO", doc: "start (default now); a later one makes the silence pending" },
  comment: { type: "string", value: "TEXT", doc: "why (required)" },
  author: { type: "string", value: "NAME", doc: "who (default $USER, else $LOGNAME)" },
  ...CONNECTION_FLAGS,
  ...HELP,
} as const satisfies FlagSpecs;

/** The flags of `silence ls`. */
export const SILENCE_LS_FLAGS = {
  all: { type: "boolean", default: false, doc: "also list expired silences (kept 120 h)" },
  json: { type: "boolean", default: false, doc: "print the API's JSON instead of a table" },
  ...CONNECTION_FLAGS,
  ...HELP,
} as const satisfies FlagSpecs;

/** The flags of `silence expire`. */
export const SILENCE_EXPIRE_FLAGS = { ...CONNECTION_FLAGS, ...HELP } as const satisfies FlagSpecs;

/** Where a command talks to. */
export interface Connection {
  /** The daemon's base URL, no trailing slash: http://127.0.0.1:8787. */
  readonly url: string;
  /** "" = none. */
  readonly token: string;
}

/** A silence to create, in the API's body form (Alertmanager's postableSilence). */
export interface NewSilence {
  readonly matchers: readonly SilenceMatcher[];
  readonly startsAt: string;
  readonly endsAt: string;
  readonly createdBy: string;
  readonly comment: string;
}

/** What a `silence` command line asks for. */
export type SilenceCommand =
  | { readonly kind: "add"; readonly connection: Connection; readonly silence: NewSilence }
  | { readonly kind: "ls"; readonly connection: Connection; readonly all: boolean; readonly json: boolean }
  | { readonly kind: "expire"; readonly connection: Connection; readonly ids: readonly string[] }
  | { readonly kind: "help"; readonly subcommand: SilenceSubcommand | null };

/** The subcommands. */
export const SILENCE_SUBCOMMANDS = ["add", "ls", "expire"] as const;
export type SilenceSubcommand = (typeof SILENCE_SUBCOMMANDS)[number];

/** A parse: the command, or why the command line is wrong (a usage error, exit 64). */
export type SilenceParse =
  | { readonly ok: true; readonly command: SilenceCommand }
  | { readonly ok: false; readonly subcommand: SilenceSubcommand | null; readonly message: string };

const DURATION_UNITS_MS: Readonly<Record<string, number>> = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** A duration as amtool and Prometheus write it ("90m", "1h30m", "2d", "1w"), in ms; null when it is not one or is 0. */
export function parseDurationMs(text: string): number | null {
  if (!/^(\d+[smhdw])+$/.test(text)) return null;
  let totalMs = 0;
  for (const [, count = "0", unit = "s"] of text.matchAll(/(\d+)([smhdw])/g))
    totalMs += Number(count) * (DURATION_UNITS_MS[unit] ?? 0);
  return totalMs > 0 && Number.isSafeInteger(totalMs) ? totalMs : null;
}

/** A date-time with its offset (Z or ±HH:MM), as the API takes; a time without one would depend on this machine's zone. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

/** An ISO date-time flag as epoch ms, or a reason. */
function timeFlag(flag: string, text: string): number | { readonly problem: string } {
  const atMs = ISO_TIME.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(atMs)
    ? { problem: `--${flag} must be a date-time with its offset, e.g. 2026-11-26T18:00:00Z, got "${text}"` }
    : atMs;
}

/** --url and --token (or $PM_SERVER_TOKEN, as `tail`), or a reason. */
function connectionOf(
  values: { readonly url: string; readonly token?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
): Connection | { readonly problem: string } {
  let url: URL;
  try {
    url = new URL(values.url);
  } catch {
    return { problem: `--url must be the daemon's http:// or https:// address, got "${values.url}"` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return { problem: `--url must be the daemon's http:// or https:// address (not ${url.protocol}//)` };
  return { url: url.href.replace(/\/+$/, ""), token: values.token ?? env["PM_SERVER_TOKEN"] ?? "" };
}

/** A reason to refuse, or the value. */
type Checked<T> = T | { readonly problem: string };
const failed = <T>(value: Checked<T>): value is { readonly problem: string } =>
  typeof value === "object" && value !== null && "problem" in value;

/** The silence `silence add` asks for at `nowMs`, refusing locally what the API would refuse. */
function newSilence(
  positionals: readonly string[],
  values: {
    readonly for?: string | undefined;
    readonly until?: string | undefined;
    readonly start?: string | undefined;
    readonly comment?: string | undefined;
    readonly author?: string | undefined;
  },
  env: Readonly<Record<string, string | undefined>>,
  nowMs: number,
): Checked<NewSilence> {
  if (positionals.length === 0)
    return { problem: "give at least one matcher, e.g. pair=BTC/USD rule=~price_.* (amtool's syntax)" };
  const matchers: SilenceMatcher[] = [];
  for (const text of positionals) {
    const matcher = parseMatcher(text);
    if ("problem" in matcher) return matcher;
    matchers.push(matcher);
  }
  const matchersWrong = matchersProblem(matchers);
  if (matchersWrong !== null) return { problem: matchersWrong };
  if (values.for !== undefined && values.until !== undefined)
    return { problem: "give --for or --until, not both" };
  const startMs = values.start === undefined ? nowMs : timeFlag("start", values.start);
  if (failed(startMs)) return startMs;
  const endMs = endOf(values, startMs);
  if (failed(endMs)) return endMs;
  const comment = values.comment?.trim() ?? "";
  if (comment === "")
    return { problem: '--comment is required: say why, e.g. --comment "exchange maintenance"' };
  const createdBy = (values.author ?? env["USER"] ?? env["LOGNAME"] ?? "").trim();
  if (createdBy === "") return { problem: "--author is required ($USER is not set)" };
  const silence = {
    matchers,
    startsAt: new Date(startMs).toISOString(),
    endsAt: new Date(endMs).toISOString(),
    createdBy,
    comment,
  };
  const problem = silenceProblem(silence);
  if (problem === null) return silence;
  return { problem: problem.startsWith("endsAt") ? "the end must be after the start" : problem };
}

/** The end of a new silence: --until, or the start plus --for (default 1h). */
function endOf(
  values: { readonly for?: string | undefined; readonly until?: string | undefined },
  startMs: number,
) {
  if (values.until !== undefined) return timeFlag("until", values.until);
  const text = values.for ?? DEFAULT_SILENCE_DURATION;
  const durationMs = parseDurationMs(text);
  if (durationMs === null)
    return { problem: `--for must be a duration such as 30m, 2h or 1d12h, got "${text}"` };
  return startMs + durationMs;
}

/** Parse `silence` arguments (those after "silence") at `nowMs`: the command, or a usage error. */
export function parseSilenceArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  nowMs: number,
): SilenceParse {
  const [first, ...rest] = argv;
  if (first === undefined)
    return { ok: false, subcommand: null, message: "give a subcommand: add, ls or expire" };
  if (first === "--help" || first === "-h" || first === "help")
    return { ok: true, command: { kind: "help", subcommand: null } };
  const subcommand = SILENCE_SUBCOMMANDS.find((name) => name === first) ?? null;
  if (subcommand === null)
    return { ok: false, subcommand, message: `unknown subcommand "${first}": use add, ls or expire` };
  let command: Checked<SilenceCommand>;
  try {
    if (subcommand === "add") command = parseAdd(rest, env, nowMs);
    else if (subcommand === "ls") command = parseLs(rest, env);
    else command = parseExpire(rest, env);
  } catch (error) {
    // parseArgs's TypeError on an unknown flag or a missing value
    command = { problem: error instanceof Error ? error.message : String(error) };
  }
  return failed(command) ? { ok: false, subcommand, message: command.problem } : { ok: true, command };
}

/** `silence add MATCHER... [flags]`. */
function parseAdd(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  nowMs: number,
): Checked<SilenceCommand> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: SILENCE_ADD_FLAGS,
    strict: true,
    allowPositionals: true,
  });
  if (values.help === true) return { kind: "help", subcommand: "add" };
  const connection = connectionOf(values, env);
  if (failed(connection)) return connection;
  const silence = newSilence(positionals, values, env, nowMs);
  return failed(silence) ? silence : { kind: "add", connection, silence };
}

/** `silence ls [--all] [--json]`. */
function parseLs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Checked<SilenceCommand> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: SILENCE_LS_FLAGS,
    strict: true,
    allowPositionals: true,
  });
  if (values.help === true) return { kind: "help", subcommand: "ls" };
  if (positionals.length > 0) return { problem: `ls takes no arguments, got "${positionals.join(" ")}"` };
  const connection = connectionOf(values, env);
  if (failed(connection)) return connection;
  return { kind: "ls", connection, all: values.all, json: values.json };
}

/** `silence expire ID...`. */
function parseExpire(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Checked<SilenceCommand> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: SILENCE_EXPIRE_FLAGS,
    strict: true,
    allowPositionals: true,
  });
  if (values.help === true) return { kind: "help", subcommand: "expire" };
  if (positionals.length === 0) return { problem: "give the id of each silence to expire (see silence ls)" };
  const connection = connectionOf(values, env);
  if (failed(connection)) return connection;
  return { kind: "expire", connection, ids: positionals };
}
