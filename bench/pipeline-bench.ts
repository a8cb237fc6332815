// Pipeline bench: decode + detect + alert (decodePairPriceBody → observe() with the shipped rules) vs JSON.parse of the same bodies.
import { performance } from "node:perf_hooks";
import { createMonitorState, observe, tick, type MonitorState } from "../src/domain/monitor.js";
import type { RuleConfig } from "../src/domain/rules/index.js";
import type { TargetSpec } from "../src/domain/types.js";
import { planTargets } from "../src/pipeline/targets.js";
import { decodePairPriceBody } from "../src/upstream/pair-price.js";
import { benchConfig, offchainMonitors } from "./lib/config.js";
import { syntheticPairIds } from "./lib/pairs.js";
import { atLeast, atMost, printResult, type BenchResult } from "./lib/result.js";
import { median, prng } from "./lib/stats.js";

/** Settings of one run. */
export interface PipelineBenchOptions {
  readonly targets: number;
  /** Simulated seconds: each target gets one body per second. */
  readonly seconds: number;
  readonly rounds: number;
}

/** The off-chain target specs the bench feeds. */
export type OffchainSpec = Extract<TargetSpec, { kind: "offchain" }>;
const SOURCES = ["BINANCE", "BYBIT", "COINBASE", "OKX", "KUCOIN", "GATEIO", "BITSTAMP"];
/** Simulated time of the first body. */
export const BASE_MS = 1_741_594_457_000;

/** An 18-decimal hex price (exact bigint arithmetic from a 1e-8 grid). */
function hex(price: number): string {
  return `0x${(BigInt(Math.round(price * 1e8)) * 10n ** 10n).toString(16)}`;
}

/**
 * Bodies in the live server's format, one per target per simulated second: random walks (≈0.05 %/s),
 * 5–7 components within ±0.1 % on every body (the daemon always asks with_components for a median target), and a 3 % jump every ~1 000 bodies so alerts fire and resolve.
 */
function generateBodies(pairs: readonly string[], seconds: number, seed: number): string[] {
  const random = prng(seed);
  const prices = pairs.map((_, i) => [82_069, 1_905, 127, 0.1734, 1.0001, 2_912][i % 6]!);
  const bodies: string[] = [];
  for (let s = 0; s < seconds; s++) {
    for (let t = 0; t < pairs.length; t++) {
      let price = prices[t]! * (1 + (random() - 0.5) * 0.001);
      if (random() < 0.001) price *= random() < 0.5 ? 1.03 : 0.97;
      prices[t] = price;
      const timestamp = BASE_MS + s * 1000 - Math.floor(random() * 400);
      // the daemon asks with_components=true for a median target, so every body carries its sources (5–7)
      const components = Array.from({ length: 5 + Math.floor(random() * 3) }, (_, k) => ({
        source: SOURCES[(t + k) % SOURCES.length],
        price: hex(price * (1 + (random() - 0.5) * 0.002)),
        timestamp: timestamp - Math.floor(random() * 5000),
      }));
      bodies.push(
        JSON.stringify({
          num_sources_aggregated: components.length,
          pair_id: pairs[t],
          price: hex(price),
          timestamp,
          decimals: 18,
          components,
        }),
      );
    }
  }
  return bodies;
}

/** Time JSON.parse alone; the checksum keeps the work observable. */
export function timeParse(bodies: readonly string[]): number {
  let checksum = 0;
  const start = performance.now();
  for (const body of bodies) checksum += (JSON.parse(body) as { decimals: number }).decimals;
  const ms = performance.now() - start;
  if (checksum === 0) throw new Error("no bodies");
  return ms;
}

/** Time the whole pipeline over the bodies on a fresh monitor state: decode, observe, and the 1 s tick. */
export function timePipeline(
  bodies: readonly string[],
  specs: readonly OffchainSpec[],
  rules: readonly RuleConfig[],
  decodeOnly: boolean,
): { ms: number; transitions: number } {
  let state: MonitorState = createMonitorState();
  let transitions = 0;
  const n = specs.length;
  const start = performance.now();
  for (let i = 0; i < bodies.length; i++) {
    const value = decodePairPriceBody(bodies[i]!);
    if (decodeOnly) {
      transitions += value.numSources > 100 ? 1 : 0;
      continue;
    }
    const second = Math.floor(i / n);
    const nowMs = BASE_MS + second * 1000 + 50;
    const target = specs[i % n]!;
    const evaluation = observe(
      state,
      { kind: "offchain", target, result: { ok: true, value }, observedAtMs: nowMs },
      rules,
      nowMs,
    );
    state = evaluation.state;
    transitions += evaluation.transitions.length;
    if (i % n === n - 1) transitions += tick(state, rules, nowMs + 500).transitions.length;
  }
  return { ms: performance.now() - start, transitions };
}

/** The bench's workload: one off-chain target per synthetic pair at 1 s, the shipped rules, and the bodies. */
export function pipelineWorkload(
  targets: number,
  seconds: number,
): { specs: OffchainSpec[]; rules: readonly RuleConfig[]; bodies: string[] } {
  const pairs = syntheticPairIds(targets);
  const config = benchConfig({ monitors: { offchain: offchainMonitors(pairs, pairs.length, 1000) } });
  const specs = planTargets(config.monitors).map((p) => p.spec as OffchainSpec);
  return { specs, rules: config.rules, bodies: generateBodies(pairs, seconds, 42) };
}

/** Run interleaved rounds (parse, decode, pipeline; rotating order) after a warm-up; medians. */
export function runPipelineBench(options: PipelineBenchOptions): BenchResult {
  const { specs, rules, bodies } = pipelineWorkload(options.targets, options.seconds);
  const warm = bodies.slice(0, Math.min(bodies.length, 50 * specs.length));
  for (let i = 0; i < 3; i++) {
    timeParse(warm);
    timePipeline(warm, specs, rules, true);
    timePipeline(warm, specs, rules, false);
  }
  const parseMs: number[] = [];
  const decodeMs: number[] = [];
  const pipelineMs: number[] = [];
  let transitions = 0;
  for (let round = 0; round < options.rounds; round++) {
    const jobs = [
      () => parseMs.push(timeParse(bodies)),
      () => decodeMs.push(timePipeline(bodies, specs, rules, true).ms),
      () => {
        const run = timePipeline(bodies, specs, rules, false);
        pipelineMs.push(run.ms);
        transitions = run.transitions;
      },
    ];
    for (let j = 0; j < jobs.length; j++) jobs[(round + j) % jobs.length]!();
  }
  const parse = median(parseMs);
  const decode = median(decodeMs);
  const pipeline = median(pipelineMs);
  const perSecond = (bodies.length / pipeline) * 1000;
  const ratio = pipeline / parse;
  return {
    name: "pipeline",
    title: "in-process decode + detect + alert vs JSON.parse of the same bodies",
    method: [
      `${bodies.length.toLocaleString("en-US")} pair-price bodies (${options.targets} targets × ${options.seconds} simulated s, every body with 5–7 components, as the daemon receives them), ${rules.length} shipped rules (config/default.json)`,
      `each round times JSON.parse, decode alone and decode → observe() (+ tick() every simulated second) on a fresh state; ${options.rounds} interleaved rounds, rotating order, medians`,
    ],
    figures: [
      { label: "JSON.parse alone", value: parse, unit: "ms" },
      { label: "decode alone", value: decode, unit: `ms (${(decode / parse).toFixed(2)}× JSON.parse)` },
      { label: "decode + detect + alert", value: pipeline, unit: "ms" },
      { label: "throughput", value: perSecond, unit: "snapshots/s" },
      { label: "alert transitions per pass", value: transitions, unit: "" },
    ],
    checks: [
      atLeast("throughput on one core", perSecond, 100_000, " snapshots/s"),
      atMost("cost vs JSON.parse", ratio, 3, "×"),
    ],
  };
}

/** Bench entry: 500 targets × 200 s = 100 000 bodies, 11 rounds (single rounds vary ±50 % on this shared machine). */
export function main(args: readonly string[] = []): Promise<BenchResult> {
  const quick = args.includes("--quick");
  const result = runPipelineBench({ targets: 500, seconds: quick ? 60 : 200, rounds: quick ? 3 : 11 });
  return Promise.resolve(result);
}

if (import.meta.url === `file://${process.argv[1]}`) printResult(await main(process.argv.slice(2)));
