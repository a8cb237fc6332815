// The pino logger factory: JSON to a given stream (stdout in production), pretty for humans, secrets redacted.
import { pino, type DestinationStream, type Logger } from "pino";
import type { LogConfig } from "./config/types.js";

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
    return pino(
      options,
      pretty({ colorize: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname,service" }),
    );
  }
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}
