// A bench's own `nats-server -js` on a free loopback port with a temporary file store, so a bench never touches the machine's NATS.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { createConnection } from "node:net";
import { freePort } from "./shipped.js";
import { tempDir } from "./config.js";
import { sleep } from "./stats.js";

/** A running nats-server: its client URL and pid, and a stop that removes its store. */
export interface BenchNats {
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** Whether `nats-server` is on PATH (`nats-server --version` runs). */
export function natsServerInstalled(): boolean {
  return spawnSync("nats-server", ["--version"], { stdio: "ignore" }).status === 0;
}

/** Start `nats-server -js` on 127.0.0.1 and a free port; resolves once its client port accepts a connection. */
export async function startBenchNats(timeoutMs = 15_000): Promise<BenchNats> {
  const port = await freePort();
  const store = tempDir("nats");
  const args = ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", store];
  const child: ChildProcess = spawn("nats-server", args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (text: string) => (stderr += text));
  const url = `nats://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
    rmSync(store, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`nats-server did not listen on ${port}: ${stderr.trim()}`);
    }
    await sleep(100);
  }
  return { url, pid: child.pid!, stop };
}

/** Whether a TCP connection to 127.0.0.1:`port` succeeds. */
function accepts(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
