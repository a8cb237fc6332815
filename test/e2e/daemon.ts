// Spawn the built daemon (`node dist/src/main.js`) and read its stdout JSON log lines as a feed.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createFeed, type Feed } from "./feed.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const MAIN_JS = join(ROOT, "dist", "src", "main.js");

/** One pino JSON line from the daemon's stdout (`raw` keeps lines that were not JSON). */
export interface LogLine {
  readonly level?: number;
  readonly msg?: string;
  readonly raw: string;
  readonly [key: string]: unknown;
}

/** How a child process ended. */
export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A spawned daemon (or one-shot CLI command). */
export interface DaemonProcess {
  readonly pid: number;
  readonly logs: Feed<LogLine>;
  readonly exited: Promise<ExitInfo>;
  stderr(): string;
  signal(signal: NodeJS.Signals): void;
  /** Resolve with the exit, or fail when it takes longer than `timeoutMs`. */
  waitExit(timeoutMs: number): Promise<ExitInfo>;
  /** Wait for a log line whose `msg` is `msg` (and which matches `extra`, if given). */
  waitLog(msg: string, timeoutMs: number, extra?: (line: LogLine) => boolean): Promise<LogLine>;
}

/** A daemon that logged `pragma-monitor started`. */
export interface RunningDaemon extends DaemonProcess {
  readonly port: number;
  readonly httpUrl: string;
  readonly wsUrl: string;
  /** Base URL of the embedded simulator (its control endpoint is `<url>/_sim/faults`). */
  readonly simulatorUrl: string;
}

const live = new Set<ChildProcess>();

/** Build dist/ the way `npx pragma-monitor` and `npm start` do: bin/pragma-monitor.js runs `tsc -b` when stale. */
export function ensureBuilt(): void {
  const result = spawnSync(process.execPath, [join(ROOT, "bin", "pragma-monitor.js"), "--version"], {
    cwd: ROOT,
    encoding: "utf8",
  });
  if (result.status !== 0)
    throw new Error(
      `bin/pragma-monitor.js --version failed (${result.status}):\n${result.stdout}${result.stderr}`,
    );
}

/** The parent's environment without anything that would reconfigure the daemon behind the test's back. */
export function cleanEnv(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith("PM_") || ["NOTIFY_SOCKET", "WATCHDOG_USEC", "STATE_DIRECTORY"].includes(key))
      continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

function parseLine(raw: string): LogLine {
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      const record = value as Record<string, unknown>;
      const { level, msg } = record;
      return {
        ...record,
        raw,
        ...(typeof level === "number" ? { level } : {}),
        ...(typeof msg === "string" ? { msg } : {}),
      };
    }
  } catch {
    // not JSON (a stack trace, pretty output): kept raw
  }
  return { raw };
}

/** Spawn `node dist/src/main.js <args>` in `cwd`; it is killed by `killAllDaemons` if still running. */
export function spawnDaemon(
  args: readonly string[],
  options: {
    readonly cwd: string;
    readonly env?: Readonly<Record<string, string>>;
    /** Entry point to run instead of dist/src/main.js (e.g. a copy laid out like the Docker image). */
    readonly mainJs?: string;
  },
): DaemonProcess {
  const child = spawn(process.execPath, [options.mainJs ?? MAIN_JS, ...args], {
    cwd: options.cwd,
    env: cleanEnv(options.env ?? {}),
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  const logs = createFeed<LogLine>((recent) => recent.map((line) => line.raw).join("\n"));
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const lines = createInterface({ input: child.stdout });
  lines.on("line", (raw) => logs.push(parseLine(raw)));
  const stdoutClosed = new Promise<void>((resolve) => lines.once("close", resolve));
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once("exit", (code, signal) => {
      live.delete(child);
      // every line the process wrote is read before waiters are told it is gone
      void stdoutClosed.then(() => {
        logs.end(`daemon exited (code ${code}, signal ${signal}); stderr: ${stderr.slice(-2000)}`);
        resolve({ code, signal });
      });
    });
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("could not spawn the daemon");
  return {
    pid,
    logs,
    exited,
    stderr: () => stderr,
    signal: (signal) => void child.kill(signal),
    waitExit: (timeoutMs) =>
      new Promise<ExitInfo>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`daemon ${pid} did not exit within ${timeoutMs} ms`)),
          timeoutMs,
        );
        void exited.then((info) => {
          clearTimeout(timer);
          resolve(info);
        });
      }),
    waitLog: (msg, timeoutMs, extra = () => true) =>
      logs.waitFor((line) => line.msg === msg && extra(line), { timeoutMs, what: `log "${msg}"` }),
  };
}

/** Spawn `run --config <file> --set server.port=0` and wait until it listens (port read from its log). */
export async function startDaemon(
  configFile: string,
  options: {
    readonly cwd: string;
    readonly args?: readonly string[];
    readonly env?: Readonly<Record<string, string>>;
    readonly timeoutMs?: number;
    /** A simulator started on its own (`simulate`) that the config points at: no embedded one to wait for. */
    readonly simulatorUrl?: string;
  },
): Promise<RunningDaemon> {
  const args = ["run", "--config", configFile, "--set", "server.port=0", ...(options.args ?? [])];
  const daemon = spawnDaemon(args, {
    cwd: options.cwd,
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const timeoutMs = options.timeoutMs ?? 10_000;
  const started = await daemon.waitLog("pragma-monitor started", timeoutMs);
  const simulator =
    options.simulatorUrl === undefined ? await daemon.waitLog("embedded simulator started", timeoutMs) : null;
  const port = started.port;
  const simulatorUrl = options.simulatorUrl ?? simulator?.url;
  if (typeof port !== "number" || typeof simulatorUrl !== "string")
    throw new Error(
      `unexpected start log lines: ${started.raw} / ${simulator?.raw ?? "(no simulator line)"}`,
    );
  return {
    ...daemon,
    port,
    httpUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/ws`,
    simulatorUrl,
  };
}

/** SIGKILL every daemon a test left running and wait until each is gone (afterEach, also after failures). */
export async function killAllDaemons(): Promise<void> {
  await Promise.all(
    [...live].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGKILL");
        }),
    ),
  );
  live.clear();
}

/** A `pragma-monitor simulate` process started on its own, and the URL it printed (no trailing slash). */
export interface SimulatorProcess {
  readonly url: string;
  readonly process: DaemonProcess;
}

/** Start `simulate` (port 0 unless given) in `cwd` and wait for its listening line. */
export async function startSimulatorProcess(
  cwd: string,
  options: { readonly port?: number; readonly seed?: number; readonly syntheticPairs?: number } = {},
): Promise<SimulatorProcess> {
  const args = ["simulate", "--port", String(options.port ?? 0), "--seed", String(options.seed ?? 42)];
  if (options.syntheticPairs !== undefined) args.push("--synthetic-pairs", String(options.syntheticPairs));
  const sim = spawnDaemon(args, { cwd });
  const line = await sim.logs.waitFor((l) => /listening on http/.test(l.raw), {
    timeoutMs: 15_000,
    what: "the simulator's listening line",
  });
  const url = /listening on (http\S+)/.exec(line.raw)?.[1];
  if (url === undefined) throw new Error(`no URL in ${line.raw}`);
  return { url: url.replace(/\/$/, ""), process: sim };
}
