// Backtest speed: a recording of 100 pairs polled at 1 s replayed through the daemon's engine (replay.ts), and a
// week of 1-minute candles of 50 pairs evaluated after the fetch (history.ts), both against their targets.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pino } from "pino";
import { replayCandles } from "../src/backtest/history.js";
import { readRecording } from "../src/backtest/reader.js";
import { replayRecording } from "../src/backtest/replay.js";
import type { Candle } from "../src/domain/types.js";
import type { RecordLine } from "../src/record/format.js";
import { createRecordingWriter } from "../src/record/writer.js";
import { decodeCandleSeriesBody } from "../src/upstream/candlestick.js";
import { createManualClock } from "../src/simulator/clock.js";
import { createMarket } from "../src/simulator/market.js";
import { handleCandlestick } from "../src/simulator/offchain-routes.js";
import { benchConfig, offchainMonitors } from "./lib/config.js";
import { syntheticPairDefs, syntheticPairIds } from "./lib/pairs.js";
import { atLeast, atMost, printResult, type BenchResult } from "./lib/result.js";
import { median } from "./lib/stats.js";
import { BASE_MS, pipelineWorkload, timePipeline } from "./pipeline-bench.js";

const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;
const MINUTE_MS = 60_000;

/** A recording of `targets` pairs polled every second for `seconds`, as the daemon writes it (response + poll). */
async function writeBenchRecording(
  dir: string,
  bodies: readonly string[],
  specs: { id: string }[],
): Promise<void> {
  const writer = createRecordingWriter({
    dir,
    maxFileBytes: 64 * 1024 * 1024,
    maxFiles: 0,
    maxBufferedBytes: 1024 * 1024 * 1024,
    nowMs: () => BASE_MS,
    logger: pino({ level: "silent" }),
  });
  writer.write({ type: "start", atMs: BASE_MS, tickMs: 1000, upstream: "http://bench.invalid" });
  const n = specs.length;
  bodies.forEach((body, i) => {
    const target = specs[i % n]!.id;
    const atMs = BASE_MS + Math.floor(i / n) * 1000 + 50 + (i % n);
    const response: RecordLine = {
      type: "response",
      atMs,
      requestAtMs: atMs - 20,
      target,
      purpose: "poll",
      endpoint: "pair_price",
      url: "http://bench.invalid/node/v1/data",
      status: 200,
      error: null,
      body,
    };
    writer.write(response);
    writer.write({ type: "poll", atMs, target, ok: true });
  });
  await writer.close();
}

/** The replay half: median of `rounds` replays of the recording; observations/s beside the pipeline's on the same bodies. */
async function replayFigures(
  seconds: number,
  rounds: number,
): Promise<{
  readonly ratio: number;
  readonly perSecond: number;
  readonly pipelinePerSecond: number;
  readonly readShare: number;
  readonly dayS: number;
  readonly bodies: number;
}> {
  const { specs, rules, bodies } = pipelineWorkload(100, seconds);
  const pairs = syntheticPairIds(100);
  const config = benchConfig({ monitors: { offchain: offchainMonitors(pairs, pairs.length, 1000) } });
  const dir = mkdtempSync(join(tmpdir(), "pm-replay-bench-"));
  try {
    await writeBenchRecording(dir, bodies, specs);
    const times: number[] = [];
    const pipelineTimes: number[] = [];
    const readTimes: number[] = [];
    for (let round = 0; round < rounds; round++) {
      readTimes.push(timeReading(dir));
      const start = performance.now();
      const result = replayRecording(readRecording(dir), config);
      times.push(performance.now() - start);
      if (result.observations !== bodies.length)
        throw new Error(`replayed ${result.observations} of ${bodies.length}`);
      pipelineTimes.push(timePipeline(bodies, specs, rules, false).ms);
    }
    const ms = median(times);
    const ratio = (seconds * 1000) / ms;
    return {
      ratio,
      perSecond: (bodies.length / ms) * 1000,
      pipelinePerSecond: (bodies.length / median(pipelineTimes)) * 1000,
      readShare: median(readTimes) / ms,
      dayS: DAY_MS / ratio / 1000,
      bodies: bodies.length,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Milliseconds to read the recording in `dir` alone (gunzip, split and JSON parse on the worker, format check), without replaying it. */
function timeReading(dir: string): number {
  const start = performance.now();
  let items = 0;
  for (const item of readRecording(dir)) items += item.kind === "line" ? 1 : 0;
  if (items === 0) throw new Error(`no lines read from ${dir}`);
  return performance.now() - start;
}

/** A week of 1 min candles per pair, read from the simulator's candlestick handler (the fetch, untimed). */
function weekOfCandles(pairs: readonly string[], toMs: number): Map<string, Candle[]> {
  const market = createMarket(7, createManualClock(toMs), {
    historyMs: 2 * WEEK_MS,
    pairs: syntheticPairDefs(pairs.length),
  });
  const candles = new Map<string, Candle[]>();
  for (const pair of pairs) {
    const [base = "", quote = ""] = pair.split("/");
    const series: Candle[] = [];
    for (let atMs = toMs; atMs > toMs - WEEK_MS; atMs -= 10_000 * MINUTE_MS) {
      const params = new Map([
        ["interval", "1min"],
        ["timestamp", String(Math.floor(atMs / 1000))],
      ]);
      series.push(...decodeCandleSeriesBody(handleCandlestick(market, base, quote, params).body).candles);
    }
    candles.set(
      pair,
      series.filter((c) => c.timeMs > toMs - WEEK_MS).sort((a, b) => a.timeMs - b.timeMs),
    );
  }
  return candles;
}

/** The candle half: a week of 1 min candles of 50 simulator pairs through the engine, median of `rounds`. */
function candleFigures(rounds: number): { readonly ms: number; readonly observations: number } {
  const toMs = Math.floor(BASE_MS / MINUTE_MS) * MINUTE_MS;
  const pairs = syntheticPairIds(50);
  const config = benchConfig({ monitors: { offchain: offchainMonitors(pairs, pairs.length, 1000) } });
  const history = { candles: weekOfCandles(pairs, toMs), problems: [] };
  const range = { fromMs: toMs - WEEK_MS, toMs, candleMs: MINUTE_MS };
  const times: number[] = [];
  let observations = 0;
  for (let round = 0; round < rounds; round++) {
    const start = performance.now();
    observations = replayCandles(history, config, range).observations;
    times.push(performance.now() - start);
  }
  return { ms: median(times), observations };
}

/** Bench entry: 30 simulated minutes of 100 pairs (180 000 polls) and a week of candles of 50 pairs (`--replay-only` or `--candles-only` for one half, e.g. under --cpu-prof). */
export async function main(args: readonly string[] = []): Promise<BenchResult> {
  const quick = args.includes("--quick");
  const only = args.includes("--candles-only") ? "candles" : args.includes("--replay-only") ? "replay" : null;
  const none = { ratio: 0, perSecond: 0, pipelinePerSecond: 0, readShare: 0, dayS: 0, bodies: 0 };
  const replay = only === "candles" ? none : await replayFigures(quick ? 300 : 1_800, quick ? 1 : 3);
  const candles = only === "replay" ? { ms: 0, observations: 0 } : candleFigures(quick ? 1 : 3);
  return {
    name: "replay",
    title: "backtest: a recording replayed through the daemon's engine, and a week of candles evaluated",
    method: [
      `one line: a recording of 100 pairs polled at 1 s (${replay.bodies.toLocaleString("en-US")} polls, response + poll lines, gzip, written by the recorder's writer) replayed by replayRecording (gunzip, line split and JSON parse streamed on a worker thread beside the replay; format check, decode, engine, ticks, sinks on the calling thread), virtual time ÷ wall time, median of ${quick ? 1 : 3}; then a week of 1 min candles of 50 simulator pairs (fetched from the simulator's handler first, untimed) through replayCandles, median of ${quick ? 1 : 3}`,
      "the pipeline figure is decode → observe() → tick() on the same bodies in memory (pipeline bench's method), beside the replay's for the cost of reading the recording",
      "reading share: the time to read the recording alone (gunzip, split and JSON parse on the worker, format check on the calling thread, no replay), median of the rounds, as a part of the replay's median time (with the worker, reading and replaying overlap)",
    ],
    figures: [
      { label: "replay speed", value: replay.ratio, unit: "× real time" },
      { label: "a day of recording replayed in", value: replay.dayS, unit: "s (extrapolated)" },
      { label: "replay observations", value: replay.perSecond, unit: "observations/s" },
      { label: "pipeline on the same bodies", value: replay.pipelinePerSecond, unit: "snapshots/s" },
      { label: "reading share of the replay", value: replay.readShare * 100, unit: "%" },
      { label: "candle week evaluated in", value: candles.ms, unit: "ms" },
      { label: "candle observations", value: candles.observations, unit: "" },
    ],
    checks: [
      atLeast("replay of 100 pairs at 1 s", replay.ratio, 1_000, "× real time"),
      atMost("a week of 1 min candles, 50 pairs", candles.ms / 1000, 5, " s"),
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) printResult(await main(process.argv.slice(2)));
