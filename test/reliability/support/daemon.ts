// The built daemon as a child process: build when dist is stale, spawn with flags, read its JSON log lines, kill it.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { Signal } from "./wait.js";

export const ROOT = resolve(import.meta.dirname, "../../..");
const MAIN = join(ROOT, "dist", "src", "main.js");

/** Newest mtime of the files under `dir` matching `keep`. */
function newestMtimeMs(dir: string, keep: (name: string) => boolean): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtimeMs(path, keep));
    else if (keep(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** Build with `npm run build` when dist/src/main.js is missing or older than any source file; returns whether it built. */
export function ensureBuilt(): boolean {
  const sourcesMs = newestMtimeMs(join(ROOT, "src"), (name) => name.endsWith(".ts"));
  if (existsSync(MAIN) && statSync(MAIN).mtimeMs >= sourcesMs) return false;
  try {
    execFileSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "pipe", timeout: 180_000 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
    const output = `${stdout?.toString() ?? ""}${stderr?.toString() ?? ""}`.slice(-2_000);
    throw new Error(`dist is stale and \`npm run build\` failed:\n${output}`, { cause: error });
  }
  return true;
}

/** A running daemon and its parsed stdout log lines. */
export interface Daemon {
  readonly child: ChildProcess;
  readonly lines: Record<string, unknown>[];
  readonly changed: Signal;
  /** Resolves with the exit code (null when killed by a signal) and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The first log line with this `msg` (waits for it). */
  line(msg: string, timeoutMs: number): Promise<Record<string, unknown>>;
  kill(signal: NodeJS.Signals): void;
}

/** Spawn `node dist/src/main.js run` with `args`. */
export function spawnDaemon(args: readonly string[], env: Readonly<Record<string, string>> = {}): Daemon {
  const child = spawn(process.execPath, [MAIN, "run", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env, PM_LOG_PRETTY: "false" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  const changed = new Signal();
  let buffered = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    for (const part of parts) {
      try {
        lines.push(JSON.parse(part) as Record<string, unknown>);
      } catch {
        lines.push({ msg: "<unparsed>", text: part });
      }
    }
    changed.notify();
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4_000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) =>
    child.once("exit", (code, signal) => {
      resolveExit({ code, signal });
      changed.notify();
    }),
  );
  let exitedYet = false;
  void exited.then(() => (exitedYet = true));
  return {
    child,
    lines,
    changed,
    exited,
    async line(msg, timeoutMs) {
      const find = (): Record<string, unknown> | undefined => lines.find((l) => l["msg"] === msg);
      await changed.until(() => find() !== undefined || exitedYet, `daemon log "${msg}"`, timeoutMs);
      const found = find();
      if (found === undefined) throw new Error(`daemon exited before "${msg}"; stderr: ${stderr}`);
      return found;
    },
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}
