// Builds recordings for backtest tests: pair-price bodies, poll lines, written through the real writer.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { RecordLine } from "../../src/record/format.js";
import { createRecordingWriter } from "../../src/record/writer.js";

/** A fresh temp directory. */
export function tempDir(prefix = "pm-backtest-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A pair-price body as the API sends it (18 decimals, hex price). */
export function pairPriceBody(pair: string, price: number, timestampMs: number): string {
  const scaled = BigInt(Math.round(price * 1e6)) * 10n ** 12n;
  return JSON.stringify({
    num_sources_aggregated: 5,
    pair_id: pair,
    price: `0x${scaled.toString(16)}`,
    timestamp: timestampMs,
    decimals: 18,
    components: null,
  });
}

/** The lines of one successful poll of `target` at `atMs`. */
export function okPoll(target: string, atMs: number, body: string): RecordLine[] {
  return [
    {
      type: "response",
      atMs,
      requestAtMs: atMs - 5,
      target,
      purpose: "poll",
      endpoint: "pair_price",
      url: "http://127.0.0.1:1/node/v1/data/ETH/USD",
      status: 200,
      error: null,
      body,
    },
    { type: "poll", atMs, target, ok: true },
  ];
}

/** The lines of one failed poll (HTTP 503). */
export function failedPoll(target: string, atMs: number): RecordLine[] {
  return [
    {
      type: "response",
      atMs,
      requestAtMs: atMs - 5,
      target,
      purpose: "poll",
      endpoint: "pair_price",
      url: "http://127.0.0.1:1/node/v1/data/ETH/USD",
      status: 503,
      error: "PM_ERR_UPSTREAM_HTTP",
      body: '{"error":"down"}',
    },
    {
      type: "poll",
      atMs,
      target,
      ok: false,
      code: "PM_ERR_UPSTREAM_HTTP",
      message: "pair_price: HTTP 503: down",
      retryable: true,
    },
  ];
}

/** Write `lines` as a recording in `dir` through the real writer (one file unless `maxFileBytes` rotates it). */
export async function writeRecording(
  dir: string,
  lines: readonly RecordLine[],
  maxFileBytes = 64 * 1024 * 1024,
  maxFiles = 0,
): Promise<void> {
  const startMs = lines[0]?.atMs ?? 0;
  const writer = createRecordingWriter({
    dir,
    maxFileBytes,
    maxFiles,
    maxBufferedBytes: 64 * 1024 * 1024,
    nowMs: () => startMs,
    logger: pino({ level: "silent" }),
  });
  for (const line of lines) writer.write(line);
  await writer.close();
}

/** A config file for the backtest CLI in `dir`; returns its path. */
export function writeConfig(dir: string, config: Record<string, unknown>, name = "config.json"): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(config));
  return path;
}

/** The `monitors` block of a config with one off-chain pair polled every second and nothing else. */
export function oneOffchainPair(pair: string): Record<string, unknown> {
  return {
    offchain: [{ pair, periodMs: 1000 }],
    onchain: [],
    publishers: [],
    funding: [],
    vaults: [],
  };
}
