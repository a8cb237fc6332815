// Child process of the latency and memory benches: the real daemon (createApp) polling N synthetic pairs of a simulator.
import { getHeapSpaceStatistics, writeHeapSnapshot } from "node:v8";
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { constants, PerformanceObserver } from "node:perf_hooks";
import pino from "pino";
import { createApp } from "../src/app.js";
import { exitWithParent } from "./lib/child.js";
import { benchConfig, offchainMonitors } from "./lib/config.js";
import { syntheticPairIds } from "./lib/pairs.js";

const [url = "", pairCount = "30", periodMs = "1000", connections = ""] = process.argv.slice(2);
const config = benchConfig({
  upstream: connections === "" ? { url } : { url, connections: Number(connections) },
  server: { port: 0, maxClients: 5_000 },
  monitors: {
    offchain: offchainMonitors(syntheticPairIds(Number(pairCount)), Number(pairCount), Number(periodMs)),
  },
});
const app = createApp({ config, logger: pino({ level: "silent" }), nowMs: Date.now, random: Math.random });
const { port } = await app.start();
exitWithParent(async () => void (await app.stop(2_000)));
const gcCounts = { minor: 0, major: 0, minorMs: 0, majorMs: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry.toJSON() as { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      gcCounts.minor++;
      gcCounts.minorMs += entry.duration;
    } else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
      gcCounts.major++;
      gcCounts.majorMs += entry.duration;
    }
  }
}).observe({ entryTypes: ["gc"] });
process.on("message", (message) => {
  if (message === "mem") {
    const usage = process.memoryUsage();
    process.send?.({
      rss: usage.rss,
      heap: usage.heapUsed,
      heapTotal: usage.heapTotal,
      external: usage.external,
      arrayBuffers: usage.arrayBuffers,
      gc: { ...gcCounts },
      cpuMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
      elu: performance.eventLoopUtilization().utilization,
      spaces: Object.fromEntries(
        getHeapSpaceStatistics().map((s) => [s.space_name, [s.space_size, s.space_used_size]]),
      ),
    });
  } else if (typeof message === "object" && message !== null && "profile" in message) {
    void profileAllocations(Number((message as { profile: number }).profile)).then((file) =>
      process.send?.({ file }),
    );
  } else if (typeof message === "object" && message !== null && "snapshot" in message) {
    process.send?.({ file: writeHeapSnapshot(String((message as { snapshot: string }).snapshot)) });
  }
});
process.send?.({ port });

/** Sample allocations for `ms` keeping objects that survived young-generation GCs (promoted garbage + live). */
async function profileAllocations(ms: number): Promise<string> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object): Promise<unknown> =>
    new Promise((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post("HeapProfiler.enable");
  await post("HeapProfiler.startSampling", {
    samplingInterval: 16_384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: false,
  });
  await new Promise((resolve) => setTimeout(resolve, ms));
  const { profile } = (await post("HeapProfiler.stopSampling")) as { profile: unknown };
  session.disconnect();
  const file = `/tmp/alloc-${process.pid}-${Date.now()}.heapprofile`;
  writeFileSync(file, JSON.stringify(profile));
  return file;
}
