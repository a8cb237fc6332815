// The pino logger factory: JSON to a given stream (stdout in production), pretty for humans, secrets redacted.
import { pino, type DestinationStream, type Logger } from "pino";
import type { PrettyOptions } from "pino-pretty";
import type { LogConfig } from "./config/types.js";
import type { AlertPayload } from "./domain/events.js";
import { alertBrief } from "./sinks/log-sink.js";

/** Paths redacted from every log line (secrets may appear in config echoes, errors or request metadata). */
export const REDACT_PATHS = [
  "apiKey",
  "*.apiKey",
  "token",
  "*.token",
  "*.metricsToken",
  "*.botToken",
  "*.routingKey",
  "*.secret",
  "headers.authorization",
  'headers["x-api-key"]',
  "*.headers.authorization",
  '*.headers["x-api-key"]',
];

/** pino-pretty's settings for `--pretty`: an alert transition is its message plus one line, not a 30-line object. */
export const PRETTY_OPTIONS = {
  translateTime: "SYS:HH:MM:ss.l",
  ignore: "pid,hostname,service",
  customPrettifiers: {
    alert: (value: unknown): string => (isAlertPayload(value) ? alertBrief(value) : JSON.stringify(value)),
  },
} satisfies PrettyOptions;

/** Enough of a shape check for pretty output (the JSON line itself is never changed). */
function isAlertPayload(value: unknown): value is AlertPayload {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<Record<keyof AlertPayload, unknown>>;
  return (
    typeof candidate.fingerprint === "string" &&
    typeof candidate.labels === "object" &&
    candidate.labels !== null
  );
}

/** Extra bindings for a child logger (pino writes each one into every line the child logs). */
export type LogBindings = Readonly<Record<string, unknown>>;

/**
 * The only way to make a child logger: pino writes a re-bound key twice (`"component":"sinks","component":"chatops"`),
 * which strict log pipelines reject, so a key the parent already binds is a programming error and throws.
 */
export function childLogger(parent: Logger, bindings: LogBindings): Logger {
  const bound = parent.bindings();
  const repeated = Object.keys(bindings).filter((key) => Object.hasOwn(bound, key));
  if (repeated.length > 0)
    throw new Error(`logger already binds ${repeated.join(", ")}: one binding per key (pick another name)`);
  return parent.child(bindings);
}

/** The logger of one part of the daemon: `component` is bound here and nowhere else. */
export function componentLogger(root: Logger, component: string): Logger {
  return childLogger(root, { component });
}

/** Create the daemon's logger; `destination` is injected so tests read lines as objects. */
export async function createLogger(config: LogConfig, destination?: DestinationStream): Promise<Logger> {
  const options = {
    level: config.level,
    base: { service: "pragma-monitor" },
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (config.pretty && destination === undefined) {
    const { default: pretty } = await import("pino-pretty");
    return pino(options, pretty({ ...PRETTY_OPTIONS, colorize: true }));
  }
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}
