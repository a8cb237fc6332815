// Test harness: our own nats-server processes (JetStream, temp store dirs, free loopback ports), one node or a 3-node cluster, killable and restartable.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The env variable that turns a missing nats-server into a failure (set by .ci/run). */
export const REQUIRE_NATS_ENV = "PM_TEST_REQUIRE_NATS";

/** Whether nats-server is on PATH; without it the cluster suite skips (loudly), or fails under REQUIRE_NATS_ENV. */
export function natsServerAvailable(): boolean {
  const found = spawnSync("nats-server", ["--version"], { encoding: "utf8" }).status === 0;
  if (found) return true;
  const message =
    "nats-server not found on PATH: the cluster suite needs it (Debian/Ubuntu: apt-get install nats-server; or https://github.com/nats-io/nats-server/releases)";
  if (process.env[REQUIRE_NATS_ENV] === "1")
    throw new Error(`${message}; ${REQUIRE_NATS_ENV}=1 makes this a failure`);
  console.warn(`SKIPPING the cluster suite: ${message}`);
  return false;
}

/** One nats-server node. */
export interface NatsNode {
  readonly name: string;
  readonly clientPort: number;
  readonly url: string;
  /** SIGKILL the process (its store dir stays for a restart). */
  kill(): Promise<void>;
  /** Start it again on the same ports and store dir. */
  restart(): Promise<void>;
  running(): boolean;
}

/** A set of nodes (one, or a cluster) with their store dirs, removed by `close()`. */
export interface NatsCluster {
  readonly nodes: readonly NatsNode[];
  /** Every node's client URL (what a member's `cluster.nats.servers` lists). */
  readonly urls: readonly string[];
  close(): Promise<void>;
}

/** A free 127.0.0.1 port (asked of the kernel, then released for nats-server to bind). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Start `size` JetStream nodes (size > 1: a cluster routed over loopback); resolves when every client port accepts. */
export async function startNats(size = 1): Promise<NatsCluster> {
  const root = mkdtempSync(join(tmpdir(), "pm-nats-"));
  const places = await placesIn(root, size);
  const routes = places.map((p) => `nats-route://127.0.0.1:${p.clusterPort}`).join(",");
  const nodes = places.map((p) => {
    const args = [
      "-js",
      "-a",
      "127.0.0.1",
      "-p",
      String(p.clientPort),
      "-sd",
      p.storeDir,
      "--server_name",
      p.name,
    ];
    if (size > 1)
      args.push("--cluster_name", "pm", "--cluster", `nats://127.0.0.1:${p.clusterPort}`, "--routes", routes);
    return createNode(p.name, p.clientPort, args);
  });
  return started(root, nodes);
}

/**
 * Start three JetStream nodes routed over loopback from one config file (`nats-server -c`), each with the
 * environment `envOf` gives it for its ports and store dir; resolves when every client port accepts.
 */
export async function startNatsFromConfig(
  configFile: string,
  envOf: (node: NatsNodePlace, all: readonly NatsNodePlace[]) => Readonly<Record<string, string>>,
): Promise<NatsCluster> {
  const root = mkdtempSync(join(tmpdir(), "pm-nats-"));
  const places = await placesIn(root, 3);
  const nodes = places.map((place) =>
    createNode(place.name, place.clientPort, ["-c", configFile], envOf(place, places)),
  );
  return started(root, nodes);
}

/** `size` nodes' names (n1, n2, ...), free loopback ports and store dirs under `root`. */
function placesIn(root: string, size: number): Promise<NatsNodePlace[]> {
  return Promise.all(
    Array.from({ length: size }, async (_, i) => ({
      name: `n${i + 1}`,
      clientPort: await freePort(),
      clusterPort: await freePort(),
      storeDir: join(root, `n${i + 1}`),
    })),
  );
}

/** Start `nodes` and wait until each accepts; closing the cluster kills them and removes `root`. */
async function started(root: string, nodes: readonly NatsNode[]): Promise<NatsCluster> {
  await Promise.all(nodes.map((node) => node.restart()));
  return {
    nodes,
    urls: nodes.map((node) => node.url),
    async close() {
      await Promise.all(nodes.map((node) => node.kill()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Where one node of `startNatsFromConfig` listens and stores. */
export interface NatsNodePlace {
  readonly name: string;
  readonly clientPort: number;
  readonly clusterPort: number;
  readonly storeDir: string;
}

function createNode(
  name: string,
  clientPort: number,
  args: readonly string[],
  env?: Readonly<Record<string, string>>,
): NatsNode {
  let child: ChildProcess | undefined;
  let output = "";
  return {
    name,
    clientPort,
    url: `nats://127.0.0.1:${clientPort}`,
    running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    async kill() {
      const current = child;
      child = undefined;
      if (current === undefined || current.exitCode !== null || current.signalCode !== null) return;
      const exited = new Promise((resolve) => current.once("exit", resolve));
      current.kill("SIGKILL");
      await exited;
    },
    async restart() {
      output = "";
      const started = spawn("nats-server", args, {
        stdio: ["ignore", "pipe", "pipe"],
        ...(env === undefined ? {} : { env: { ...process.env, ...env } }),
      });
      started.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
      started.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child = started;
      await waitForPort(clientPort, 15_000, () => `nats-server ${name} did not listen:\n${output}`);
    },
  };
}

/** Resolve once `port` accepts a TCP connection, or fail after `timeoutMs`. */
async function waitForPort(port: number, timeoutMs: number, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: "127.0.0.1", port });
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(describe());
}
