// Child process of the simulator bench: serves either the simulator or a bare node:http constant-body server on port 0.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startSimulator } from "../src/simulator/server.js";

const CONSTANT_BODY = Buffer.from(
  '{"num_sources_aggregated":6,"pair_id":"BTC/USD","price":"0x1160fbea235f368f0000","timestamp":1741594457412,"decimals":18,"components":null}',
);

/** Start the requested server and report its port to the parent over IPC; exit when the parent says stop. */
async function serve(mode: string): Promise<void> {
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
    const simulator = await startSimulator({ seed: 1 });
    port = simulator.port;
    close = () => simulator.close();
  }
  process.on("message", (message) => {
    if (message === "stop") void close().then(() => process.exit(0));
  });
  process.send?.({ port });
}

await serve(process.argv[2] ?? "simulator");
