// Child process of the latency and memory benches: the real daemon (createApp) polling N synthetic pairs of a simulator.
import pino from "pino";
import { createApp } from "../src/app.js";
import { exitWithParent } from "./lib/child.js";
import { benchConfig, offchainMonitors } from "./lib/config.js";
import { syntheticPairIds } from "./lib/pairs.js";

const [url = "", pairCount = "30", periodMs = "1000"] = process.argv.slice(2);
const config = benchConfig({
  upstream: { url },
  server: { port: 0, maxClients: 5_000 },
  monitors: {
    offchain: offchainMonitors(syntheticPairIds(Number(pairCount)), Number(pairCount), Number(periodMs)),
  },
});
const app = createApp({ config, logger: pino({ level: "silent" }), nowMs: Date.now, random: Math.random });
const { port } = await app.start();
exitWithParent(() => app.stop(2_000));
process.on("message", (message) => {
  if (message === "mem")
    process.send?.({ rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed });
});
process.send?.({ port });
