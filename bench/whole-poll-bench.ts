// Whole-poll bench: every step the daemon takes per pair-price response (client, metrics, decode, detect, alert, price ticks, hub), in process, on virtual time.
import { performance } from "node:perf_hooks";
import pino from "pino";
import { Registry } from "prom-client";
import { VirtualAction, VirtualTimeScheduler } from "rxjs";
import { MockAgent, request } from "undici";
import { createMonitorState } from "../src/domain/monitor.js";
import { createMetrics } from "../src/metrics.js";
import { createEventHub } from "../src/pipeline/event-hub.js";
import { createMonitorRunner } from "../src/pipeline/monitor-runner.js";
import { createJournal } from "../src/state/journal.js";
import { createPragmaClient } from "../src/upstream/client.js";
import { benchConfig, offchainMonitors } from "./lib/config.js";
import { syntheticPairIds } from "./lib/pairs.js";
import { printResult, type BenchResult } from "./lib/result.js";
import { median } from "./lib/stats.js";
import { pipelineWorkload, timeParse } from "./pipeline-bench.js";

/** Settings of one run. */
export interface WholePollOptions {
  readonly targets: number;
  readonly seconds: number;
  readonly rounds: number;
}

const BASE_MS = 1_741_594_457_000;
const ORIGIN = "http://upstream.invalid";
const STEP_MS = 100;

/** A MockAgent answering each pair-price GET with that pair's pre-generated body of the current virtual second. */
function mockUpstream(
  bodies: readonly string[],
  pairs: readonly string[],
  now: () => number,
): { agent: MockAgent; answered: () => number } {
  const agent = new MockAgent({ connections: 16 });
  agent.disableNetConnect();
  const index = new Map(pairs.map((p, i) => [`/node/v1/data/${p}`, i]));
  let answered = 0;
  agent
    .get(ORIGIN)
    .intercept({ path: () => true, method: "GET" })
    .reply(200, (opts) => {
      const path = opts.path.slice(0, opts.path.indexOf("?"));
      const second = Math.floor((now() - BASE_MS) / 1000);
      answered++;
      return bodies[(second % (bodies.length / pairs.length)) * pairs.length + index.get(path)!]!;
    })
    .persist();
  return { agent, answered: () => answered };
}

/** Let the promise chains of the polls started in this step (mock reply, body, decode, feed) run to the end. */
async function settle(done: () => number, expected: number): Promise<void> {
  for (let spins = 0; done() < expected && spins < 10_000; spins++)
    await new Promise((resolve) => setImmediate(resolve));
}

/** One pass: a fresh runner polls every target once per virtual second for `seconds`; polls per wall second. */
async function timeWholePoll(bodies: readonly string[], targets: number, seconds: number): Promise<number> {
  const pairs = syntheticPairIds(targets);
  const config = benchConfig({
    upstream: { url: ORIGIN },
    monitors: { offchain: offchainMonitors(pairs, targets, 1000), spreadMs: 1000 },
  });
  const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
  const now = (): number => BASE_MS + scheduler.now();
  const { agent, answered } = mockUpstream(bodies, pairs, now);
  const metrics = createMetrics(new Registry());
  let polled = 0;
  const client = createPragmaClient({
    baseUrl: ORIGIN,
    vaultBaseUrl: `${ORIGIN}/vault`,
    dispatcher: agent,
    timeoutMs: config.upstream.timeoutMs,
    retry: config.upstream.retry,
    // the daemon's request observer (app-upstream.ts createUpstreamClient): latency histogram and request counter
    observer: (sample) => {
      polled++;
      metrics.upstreamLatency.observe({ endpoint: sample.endpoint }, sample.durationMs / 1000);
      metrics.upstreamRequests.inc({
        endpoint: sample.endpoint,
        status: String(sample.status ?? sample.errorCode),
      });
    },
  });
  const hub = createEventHub({ journal: createJournal(10_000), nowMs: now, version: "bench" });
  const runner = createMonitorRunner(
    {
      client,
      hub,
      metrics,
      logger: pino({ level: "silent" }),
      nowMs: now,
      random: Math.random,
      pollTimeoutMs: 15_000,
      scheduler,
    },
    createMonitorState(),
  );
  const start = performance.now();
  runner.update(config.monitors, config.rules);
  for (let frame = STEP_MS; frame <= seconds * 1000; frame += STEP_MS) {
    scheduler.maxFrames = frame;
    scheduler.flush();
    await settle(() => polled, answered());
  }
  const ms = performance.now() - start;
  runner.stop();
  await agent.close();
  return (polled / ms) * 1000;
}

/** The mock alone: the same GETs in the same batches (a tenth of the targets per 100 ms step) with request() + body.text(). */
async function timeMockOnly(bodies: readonly string[], targets: number, seconds: number): Promise<number> {
  const pairs = syntheticPairIds(targets);
  let frame = 0;
  const { agent } = mockUpstream(bodies, pairs, () => BASE_MS + frame);
  const perStep = Math.ceil(targets / (1000 / STEP_MS));
  let done = 0;
  const start = performance.now();
  for (frame = STEP_MS; frame <= seconds * 1000; frame += STEP_MS) {
    const first = ((frame / STEP_MS) % (1000 / STEP_MS)) * perStep;
    const batch = pairs.slice(first, first + perStep).map(async (pair) => {
      const response = await request(`${ORIGIN}/node/v1/data/${pair}?interval=1s`, { dispatcher: agent });
      await response.body.text();
      done++;
    });
    await Promise.all(batch);
  }
  const ms = performance.now() - start;
  await agent.close();
  return (done / ms) * 1000;
}

/** Interleaved rounds of JSON.parse and the whole poll over the same bodies; medians. */
export async function runWholePollBench(options: WholePollOptions): Promise<BenchResult> {
  const { bodies } = pipelineWorkload(options.targets, options.seconds);
  await timeWholePoll(bodies, options.targets, Math.min(20, options.seconds)); // warm-up
  const parse: number[] = [];
  const whole: number[] = [];
  const mock: number[] = [];
  for (let round = 0; round < options.rounds; round++) {
    parse.push((bodies.length / timeParse(bodies)) * 1000);
    whole.push(await timeWholePoll(bodies, options.targets, options.seconds));
    mock.push(await timeMockOnly(bodies, options.targets, options.seconds));
  }
  const parsePerS = median(parse);
  const wholePerS = median(whole);
  const mockPerS = median(mock);
  // per-poll time of the daemon's own work: whole poll minus the mock's request + body.text()
  const ownUs = 1e6 / wholePerS - 1e6 / mockPerS;
  return {
    name: "whole-poll",
    title:
      "whole poll in process: client → metrics → decode → detect → alert → hub (price ticks), per response",
    method: [
      `one line: a real monitor runner (createMonitorRunner + createPragmaClient + createEventHub + createMetrics, shipped rules) polls ${options.targets} targets once per virtual second for ${options.seconds} s on an rxjs VirtualTimeScheduler; undici's MockAgent answers each GET with a realistic body (5–7 components, as the daemon receives); polls per wall second on one core vs JSON.parse of the same bodies; ${options.rounds} interleaved rounds, medians`,
      "covers everything per response except the socket: URL and headers, undici request and body to string, the request observer's metrics, decode, observe/detect/alert, price ticks and alerts through the hub (no subscriber connected); MockAgent's own cost is included in the whole poll and measured alone (the same GETs in the same 100 ms batches) to give the daemon's own work per poll",
    ],
    figures: [
      { label: "whole poll", value: wholePerS, unit: "polls/s" },
      { label: "JSON.parse alone", value: parsePerS, unit: "bodies/s" },
      { label: "whole poll cost vs JSON.parse", value: parsePerS / wholePerS, unit: "×" },
      { label: "MockAgent request + body.text() alone", value: mockPerS, unit: "requests/s" },
      { label: "daemon's own work per poll (whole − mock)", value: ownUs, unit: "µs" },
      { label: "… vs JSON.parse of the body", value: ownUs / (1e6 / parsePerS), unit: "×" },
    ],
    checks: [],
    notes: [
      "no design target: the figure shows what a poll costs beyond the pipeline bench's decode + detect + alert",
    ],
  };
}

/** Bench entry: 500 targets × 200 virtual s (`--quick`: 60 s), 5 rounds (`--quick`: 1). */
export function main(args: readonly string[] = []): Promise<BenchResult> {
  const quick = args.includes("--quick");
  return runWholePollBench({ targets: 500, seconds: quick ? 60 : 200, rounds: quick ? 1 : 5 });
}

if (import.meta.url === `file://${process.argv[1]}`) printResult(await main(process.argv.slice(2)));
