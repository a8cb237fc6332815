// `pragma-monitor tail` arguments: the flags (usage text is generated from them) and their parser.
import { parseArgs } from "node:util";
import { SEVERITIES, type Severity } from "../domain/events.js";
import type { FlagSpecs } from "./usage.js";

export const DEFAULT_URL = "ws://127.0.0.1:8787/ws";

/** The flags `tail` understands, in the order its usage lists them. */
export const TAIL_FLAGS = {
  url: {
    type: "string",
    default: DEFAULT_URL,
    value: "ws://HOST:PORT/ws",
    doc: "the daemon's WebSocket API",
  },
  token: { type: "string", value: "T", doc: "bearer token (default $PM_SERVER_TOKEN)" },
  pairs: { type: "string", value: "BTC/USD,...", doc: "only these pairs" },
  rules: { type: "string", value: "price_change,...", doc: "only these rules" },
  "min-severity": { type: "string", value: SEVERITIES.join("|"), doc: "only alerts at least this severe" },
  since: { type: "string", value: "N", doc: "first replay the journaled events after seq N" },
  json: { type: "boolean", default: false, doc: "print the protocol frames as JSON lines" },
  prices: { type: "boolean", default: false, doc: "also print price ticks" },
  help: { type: "boolean", short: "h", doc: "print this help" },
} as const satisfies FlagSpecs;

/** What a `tail` command line asks for. */
export interface TailOptions {
  readonly url: string;
  readonly token: string;
  readonly pairs: readonly string[];
  readonly rules: readonly string[];
  readonly minSeverity: Severity | null;
  readonly since: number | null;
  readonly json: boolean;
  readonly prices: boolean;
}

/** Parse `tail` arguments (those after the command name) into options, or a usage error. */
export function parseTailArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { readonly ok: true; readonly options: TailOptions } | { readonly ok: false; readonly message: string } {
  try {
    const { values } = parseArgs({
      args: [...argv],
      strict: true,
      options: TAIL_FLAGS,
    });
    if (!/^wss?:\/\//.test(values.url)) return { ok: false, message: `--url must be ws:// or wss://` };
    const severity = values["min-severity"];
    if (severity !== undefined && !(SEVERITIES as readonly string[]).includes(severity))
      return { ok: false, message: `--min-severity must be one of ${SEVERITIES.join(", ")}` };
    const since = values.since === undefined ? null : Number(values.since);
    if (since !== null && !(Number.isSafeInteger(since) && since >= 0))
      return { ok: false, message: "--since must be a non-negative integer seq" };
    const list = (text: string | undefined): string[] =>
      text === undefined
        ? []
        : text
            .split(",")
            .map((item) => item.trim())
            .filter((item) => item !== "");
    return {
      ok: true,
      options: {
        url: values.url,
        token: values.token ?? env["PM_SERVER_TOKEN"] ?? "",
        pairs: list(values.pairs),
        rules: list(values.rules),
        minSeverity: (severity as Severity | undefined) ?? null,
        since,
        json: values.json,
        prices: values.prices,
      },
    };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}
