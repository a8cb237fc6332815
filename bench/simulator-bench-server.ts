// Child process of the benches: serves the simulator (optionally with N synthetic pairs) or a bare node:http constant-body server on port 0.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startSimulator } from "../src/simulator/server.js";
import { syntheticPairDefs } from "./lib/pairs.js";
import { DEFAULT_PAIRS } from "../src/simulator/catalog.js";

const CONSTANT_BODY = Buffer.from(
  '{"num_sources_aggregated":6,"pair_id":"BTC/USD","price":"0x1160fbea235f368f0000","timestamp":1741594457412,"decimals":18,"components":null}',
);

/**
 * Start the requested server and report `{port}` to the parent over IPC. Replies `{cpu}` (process.cpuUsage)
 * to "cpu" so benches can show the server is not the bottleneck; exits on "stop" or when the parent goes.
 */
async function serve(mode: string, syntheticPairs: number): Promise<void> {
  let port: number;
  let close: () => Promise<void>;
  if (mode === "bare") {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": CONSTANT_BODY.length });
      res.end(CONSTANT_BODY);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    close = () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
  } else {
    const pairs = syntheticPairs > 0 ? [...DEFAULT_PAIRS, ...syntheticPairDefs(syntheticPairs)] : undefined;
    const simulator = await startSimulator({ seed: 1, ...(pairs === undefined ? {} : { pairs }) });
    port = simulator.port;
    close = () => simulator.close();
  }
  const stop = (): void => void close().finally(() => process.exit(0));
  process.on("message", (message) => {
    if (message === "stop") stop();
    if (message === "cpu") process.send?.({ cpu: process.cpuUsage() });
  });
  process.on("disconnect", stop);
  process.send?.({ port });
}

await serve(process.argv[2] ?? "simulator", Number(process.argv[3] ?? 0));
