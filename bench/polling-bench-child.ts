// Child process of the polling bench: polls N pairs every second as the real daemon, a bare undici loop or a naive fetch script.
import pino from "pino";
import { Agent, request } from "undici";
import { createApp } from "../src/app.js";
import type { TargetSpec } from "../src/domain/types.js";
import { planTargets } from "../src/pipeline/targets.js";
import { pairPricePath } from "../src/upstream/pair-price.js";
import { exitWithParent } from "./lib/child.js";
import { benchConfig, offchainMonitors } from "./lib/config.js";
import { syntheticPairIds } from "./lib/pairs.js";
import { sleep } from "./lib/stats.js";

/** What the child reports after its measurement window. */
export interface PollerReport {
  readonly cpuMs: number;
  readonly requests: number;
  readonly errors: number;
  readonly windowMs: number;
}

const [mode = "daemon", url = "", pairCount = "500", warmupS = "3", measureS = "10"] = process.argv.slice(2);
const PERIOD_MS = 1000;
const config = benchConfig({
  upstream: { url },
  server: { port: 0 },
  monitors: { offchain: offchainMonitors(syntheticPairIds(Number(pairCount)), Number(pairCount), PERIOD_MS) },
});
let requests = 0;
let count = (): Promise<number> => Promise.resolve(requests);
let errors = 0;
let running = true;
const stops: (() => Promise<void>)[] = [];
exitWithParent(async () => {
  running = false;
  for (const stop of stops) await stop().catch(() => undefined);
});

/** The URLs the daemon polls (same query building as the pipeline's fetchTarget). */
const urls = planTargets(config.monitors).map((plan) => {
  const spec = plan.spec as Extract<TargetSpec, { kind: "offchain" }>;
  return (
    url +
    pairPricePath({
      pair: spec.pair,
      entryType: spec.entryType,
      aggregation: spec.aggregation,
      interval: spec.interval,
      routing: true,
      withComponents: true,
    })
  );
});

if (mode === "daemon") {
  const app = createApp({ config, logger: pino({ level: "silent" }), nowMs: Date.now, random: Math.random });
  await app.start();
  stops.push(async () => void (await app.stop(2_000)));
  count = async () => (await app.metrics.polls.get()).values.reduce((sum, v) => sum + v.value, 0);
} else if (mode === "undici") {
  // A bare loop: one keep-alive pool, GET, parse the JSON body, wait a period, again.
  const dispatcher = new Agent({ connections: config.upstream.connections, keepAliveTimeout: 4_000 });
  stops.push(() => dispatcher.close());
  for (const [i, target] of urls.entries()) {
    void (async () => {
      await sleep((i / urls.length) * PERIOD_MS);
      while (running) {
        try {
          const response = await request(target, { dispatcher });
          await response.body.json();
          requests++;
        } catch {
          errors++;
        }
        await sleep(PERIOD_MS);
      }
    })();
  }
} else {
  // The naive script: setInterval + global fetch + res.json().
  for (const target of urls) {
    const timer = setInterval(() => {
      fetch(target)
        .then((res) => res.json())
        .then(() => requests++)
        .catch(() => errors++);
    }, PERIOD_MS);
    stops.push(() => Promise.resolve(clearInterval(timer)));
  }
}

await sleep(Number(warmupS) * 1000);
process.send?.({ phase: "start" });
const startRequests = await count();
const startCpu = process.cpuUsage();
const startMs = performance.now();
await sleep(Number(measureS) * 1000);
const cpu = process.cpuUsage(startCpu);
const windowMs = performance.now() - startMs;
const report: PollerReport = {
  cpuMs: (cpu.user + cpu.system) / 1000,
  requests: (await count()) - startRequests,
  errors,
  windowMs,
};
process.send?.(report);
