// A recording for the --html report's tests: two pairs, two moves of one, an outage of the other (unit and browser tests).
import type { RecordLine } from "../../src/record/format.js";
import { failedPoll, okPoll, pairPriceBody } from "./helpers.js";

export const T0 = Date.parse("2026-11-21T08:00:00.000Z");
export const ETH = "offchain:ETH/USD:spot:median:1s";
export const BTC = "offchain:BTC/USD:spot:median:1s";

/** Two pairs polled every second for 90 s: ETH steps up 4 % at 30 s and back at 60 s; BTC's upstream fails at 70 s. */
export function htmlRecording(): RecordLine[] {
  const lines: RecordLine[] = [{ type: "start", atMs: T0, tickMs: 1000, upstream: "http://127.0.0.1:1" }];
  for (let s = 1; s <= 90; s++) {
    const atMs = T0 + s * 1000;
    const eth = s >= 30 && s < 60 ? 2080 : 2000;
    lines.push(...okPoll(ETH, atMs, pairPriceBody("ETH/USD", eth + (s % 3), atMs - 100)));
    if (s >= 70 && s < 74) lines.push(...failedPoll(BTC, atMs));
    else lines.push(...okPoll(BTC, atMs, pairPriceBody("BTC/USD", 60_000 + 10 * (s % 7), atMs - 100)));
  }
  return lines;
}

/** Both pairs polled every second; a 2 % in 10 s move rule and upstream_error after 2 failures; no sink. */
export const HTML_CONFIG = {
  upstream: { url: "http://127.0.0.1:1" },
  monitors: {
    offchain: [
      { pair: "ETH/USD", periodMs: 1000 },
      { pair: "BTC/USD", periodMs: 1000 },
    ],
    onchain: [],
    publishers: [],
    funding: [],
    vaults: [],
    warmup: { enabled: false },
  },
  rules: [
    { kind: "price_change", id: "move", windowMs: 10_000, threshold: 0.02 },
    { kind: "upstream_error", threshold: 2 },
  ],
  sinks: [],
};
