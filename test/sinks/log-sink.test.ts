// The stdout sink's alert line: the message says status, severity and rule; the JSON keeps the whole event; pretty is short.
import { prettyFactory } from "pino-pretty";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { AlertPayload } from "../../src/domain/events.js";
import { PRETTY_OPTIONS } from "../../src/logger.js";
import { alertMessage, logEvent } from "../../src/sinks/log-sink.js";
import { makeAlert } from "./chatops/helpers.js";

const ALERT = makeAlert();

/** Log one alert event through a real pino logger and return the JSON line it wrote. */
function logLine(alert: AlertPayload): string {
  const lines: string[] = [];
  const logger = pino({ base: { service: "pragma-monitor" } }, { write: (line: string) => lines.push(line) });
  logEvent(logger, { type: "alert", seq: 7, alert });
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe("alert log lines", () => {
  it.each([
    {
      name: "firing",
      alert: ALERT,
      msg: "[firing critical] price_change: BTC/USD moved +5.02% in 1min (threshold 2%)",
    },
    {
      name: "a repeat reminder",
      alert: { ...ALERT, reason: "repeat" as const, severity: "warning" as const },
      msg: "[firing warning repeat] price_change: BTC/USD moved +5.02% in 1min (threshold 2%)",
    },
    {
      name: "resolved",
      alert: {
        ...ALERT,
        status: "resolved" as const,
        reason: "resolved" as const,
        summary: "BTC/USD back within 2%",
      },
      msg: "[resolved critical] price_change: BTC/USD back within 2%",
    },
  ])("msg of $name: status, severity and rule, then the summary", ({ alert, msg }) => {
    expect(alertMessage(alert)).toBe(msg);
    const line = JSON.parse(logLine(alert)) as Record<string, unknown>;
    expect(line["msg"]).toBe(msg);
    expect(line["alert"]).toEqual(alert); // the event itself is kept whole, under one key
    expect(line["seq"]).toBe(7);
  });

  it("pretty output is the message plus one line for the alert, not the whole object", () => {
    const pretty = prettyFactory({ ...PRETTY_OPTIONS, colorize: false })(logLine(ALERT));
    const lines = pretty.trimEnd().split("\n");
    expect(lines[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] ERROR: \[firing critical\] price_change: BTC\/USD moved \+5\.02% in 1min \(threshold 2%\)$/,
    );
    expect(lines.slice(1).map((line) => line.trim())).toEqual([
      'event: "alert"',
      "seq: 7",
      "alert: 9f2c41d0a7b3e6f1 pair=BTC/USD market=offchain entry_type=spot window=1min value=0.0502 threshold=0.02",
    ]);
  });
});
