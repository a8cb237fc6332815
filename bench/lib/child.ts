// Child-process plumbing of the benches: fork a bench entry (.ts under tsx, .js when built), talk over IPC, always kill.
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

/** A forked bench child and its first IPC message. */
export interface BenchChild<M> {
  readonly child: ChildProcess;
  readonly ready: M;
}

/** Path of a sibling bench module with the extension this process runs (tsx: .ts, built: .js). */
export function benchEntry(name: string): string {
  const extension = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
  return fileURLToPath(new URL(`../${name}${extension}`, import.meta.url));
}

/** Fork `bench/<name>` with `args` (and extra node flags); resolves with its first message (or rejects on early exit / timeout). */
export async function forkChild<M>(
  name: string,
  args: readonly string[],
  timeoutMs = 30_000,
  extraExecArgv: readonly string[] = [],
): Promise<BenchChild<M>> {
  const child = fork(benchEntry(name), [...args], {
    execArgv: [...process.execArgv, ...extraExecArgv],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  try {
    const ready = await nextMessage<M>(child, timeoutMs);
    return { child, ready };
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}

/** The next IPC message of a child, rejecting when it exits first or `timeoutMs` passes. */
export function nextMessage<M>(child: ChildProcess, timeoutMs: number): Promise<M> {
  return new Promise<M>((resolve, reject) => {
    const cleanup = (): void => {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
    };
    const onMessage = (message: unknown): void => {
      cleanup();
      resolve(message as M);
    };
    const onExit = (code: number | null): void => {
      cleanup();
      reject(new Error(`bench child exited early (code ${code})`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`bench child silent for ${timeoutMs} ms`));
    }, timeoutMs);
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}

/** Send a request and wait for the reply. */
export async function ask<M>(child: ChildProcess, message: unknown, timeoutMs: number): Promise<M> {
  const reply = nextMessage<M>(child, timeoutMs);
  child.send(message as object);
  return reply;
}

/** Stop a child: ask it to stop, SIGKILL after `graceMs`; resolves once it has exited. */
export async function stopChild(child: ChildProcess, graceMs = 3_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  if (child.connected) child.send("stop");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Exit when the parent says "stop" or disappears (so no bench child outlives its run). */
export function exitWithParent(onStop: () => Promise<void> | void = () => undefined): void {
  const stop = (): void => {
    void Promise.resolve()
      .then(onStop)
      .finally(() => process.exit(0));
  };
  process.on("message", (message) => {
    if (message === "stop") stop();
  });
  process.on("disconnect", stop);
}
