// Decode benchmark: pair-price bodies through the client's decoder vs JSON.parse alone, side by side in one run.
import { performance } from "node:perf_hooks";
import { decodePairPriceBody } from "../src/upstream/pair-price.js";
import { median, prng } from "./lib/stats.js";

/** Settings of one bench run. */
export interface DecodeBenchOptions {
  readonly bodies: number;
  readonly rounds: number;
  readonly seed: number;
}

/** Medians of the interleaved rounds and their ratio. */
export interface DecodeBenchResult {
  readonly bodies: number;
  readonly rounds: number;
  readonly parseMedianMs: number;
  readonly decodeMedianMs: number;
  /** decode (JSON.parse + validation + domain mapping) ÷ JSON.parse alone. */
  readonly ratio: number;
  readonly decodesPerSecond: number;
}

const PAIRS = ["BTC/USD", "ETH/USD", "SOL/USD", "STRK/USD", "USDC/USD", "USDT/USD", "EUR/USD", "XAU/USD"];
const PRICES = [82_069, 1_905, 127, 0.16, 1, 1, 1.08, 2_915];
const SOURCES = ["BINANCE", "BYBIT", "COINBASE", "OKX", "KUCOIN", "GATEIO", "BITSTAMP", "MEXC"];

/** An 18-decimal hex price near `price` (exact bigint arithmetic from a 1e-8 grid). */
function hexPrice(price: number, random: () => number): string {
  const units = BigInt(Math.round(price * (1 + (random() - 0.5) * 0.002) * 1e8));
  return `0x${(units * 10n ** 10n).toString(16)}`;
}

/** Realistic /node/v1/data bodies in the live server's format: ~70 % with 5 components, the rest `components: null`. */
export function generatePairPriceBodies(count: number, seed: number): string[] {
  const random = prng(seed);
  const bodies = new Array<string>(count);
  const baseMs = 1_741_594_457_000;
  for (let i = 0; i < count; i++) {
    const p = i % PAIRS.length;
    const price = PRICES[p]!;
    const timestampMs = baseMs + i * 1000 + Math.floor(random() * 1000);
    const withComponents = random() < 0.7;
    const components = withComponents
      ? Array.from({ length: 5 }, (_, k) => ({
          source: SOURCES[(i + k) % SOURCES.length],
          price: hexPrice(price, random),
          timestamp: timestampMs - 17_000 - Math.floor(random() * 5000),
        }))
      : null;
    bodies[i] = JSON.stringify({
      num_sources_aggregated: withComponents ? 5 : 3 + Math.floor(random() * 6),
      pair_id: PAIRS[p],
      price: hexPrice(price, random),
      timestamp: timestampMs,
      decimals: 18,
      components,
    });
  }
  return bodies;
}

/** Time JSON.parse alone over every body; the checksum keeps the work observable. */
function timeParse(bodies: readonly string[]): { ms: number; checksum: number } {
  let checksum = 0;
  const start = performance.now();
  for (const body of bodies) {
    const parsed = JSON.parse(body) as { num_sources_aggregated: number };
    checksum += parsed.num_sources_aggregated;
  }
  return { ms: performance.now() - start, checksum };
}

/** Time the full decode (parse + validate + map to domain types) over every body. */
function timeDecode(bodies: readonly string[]): { ms: number; checksum: number } {
  let checksum = 0;
  const start = performance.now();
  for (const body of bodies) {
    checksum += decodePairPriceBody(body).numSources;
  }
  return { ms: performance.now() - start, checksum };
}

/** Run interleaved rounds (alternating which side goes first) after a warm-up and return the medians. */
export function runDecodeBench(options: DecodeBenchOptions): DecodeBenchResult {
  const bodies = generatePairPriceBodies(options.bodies, options.seed);
  const warm = bodies.slice(0, Math.min(bodies.length, 20_000));
  timeParse(warm);
  timeDecode(warm);
  const parseMs: number[] = [];
  const decodeMs: number[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const parseFirst = round % 2 === 0;
    const first = parseFirst ? timeParse(bodies) : timeDecode(bodies);
    const second = parseFirst ? timeDecode(bodies) : timeParse(bodies);
    if (first.checksum !== second.checksum) throw new Error("decode and parse disagree on the bodies");
    (parseFirst ? parseMs : decodeMs).push(first.ms);
    (parseFirst ? decodeMs : parseMs).push(second.ms);
  }
  const parseMedianMs = median(parseMs);
  const decodeMedianMs = median(decodeMs);
  return {
    bodies: options.bodies,
    rounds: options.rounds,
    parseMedianMs,
    decodeMedianMs,
    ratio: decodeMedianMs / parseMedianMs,
    decodesPerSecond: (options.bodies / decodeMedianMs) * 1000,
  };
}

/** Bench entry point: 100 000 bodies, 9 interleaved rounds; prints the ratio against the ≤ 2× target. */
export async function main(): Promise<void> {
  const result = runDecodeBench({ bodies: 100_000, rounds: 9, seed: 42 });
  const verdict = result.ratio <= 2 ? "ok" : "OVER TARGET";
  process.stdout.write(
    `decode-bench: ${result.bodies} pair-price bodies, ${result.rounds} interleaved rounds (medians)\n` +
      `  JSON.parse alone : ${result.parseMedianMs.toFixed(1)} ms\n` +
      `  full decode      : ${result.decodeMedianMs.toFixed(1)} ms (${Math.round(result.decodesPerSecond)} bodies/s)\n` +
      `  ratio            : ${result.ratio.toFixed(2)}× JSON.parse (target ≤ 2×) ${verdict}\n`,
  );
  await Promise.resolve(); // async like every bench entry point, so a runner can await them alike
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
