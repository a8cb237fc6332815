// `npm start` as the README's quick start runs it: Ctrl-C (SIGINT to the whole foreground group) drains and exits 0.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ROOT, cleanEnv, ensureBuilt, type ExitInfo } from "./daemon.js";

beforeAll(() => ensureBuilt(), 120_000);

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Start `npm start -- <args>` as a terminal would: leader of its own process group, which is what Ctrl-C signals. */
function npmStart(args: readonly string[]) {
  const child = spawn("npm", ["start", "--", ...args], {
    cwd: ROOT,
    env: cleanEnv({}),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const group = child.pid;
  if (group === undefined) throw new Error("could not spawn npm");
  cleanups.push(() => {
    try {
      process.kill(-group, "SIGKILL");
    } catch {
      // the whole group is gone already
    }
  });
  const messages: string[] = [];
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const started = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      const msg = /"msg":"([^"]*)"/.exec(line)?.[1];
      if (msg !== undefined) messages.push(msg);
      if (msg === "pragma-monitor started") resolve();
    });
    child.once("exit", () => reject(new Error(`npm start exited before starting: ${stderr}`)));
  });
  const exited = new Promise<ExitInfo>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { group, started, exited, messages, stderr: () => stderr };
}

describe("npm start", () => {
  it.each(["SIGINT", "SIGTERM"] as const)(
    "%s to the foreground process group: the daemon drains and the shell sees exit 0",
    async (signal) => {
      const stateDir = mkdtempSync(join(tmpdir(), "pm-npm-start-"));
      cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
      const npm = npmStart(["--set", "server.port=0", "--set", `state.dir=${stateDir}`]);
      await npm.started;
      // a terminal's Ctrl-C reaches npm, its shell and the daemon at once; npm also forwards it to its shell
      process.kill(-npm.group, signal);
      expect(await npm.exited, npm.stderr()).toEqual({ code: 0, signal: null });
      expect(npm.messages).toContain("stopped");
      expect(npm.messages).not.toContain("second signal: exiting now");
    },
    60_000,
  );
});
