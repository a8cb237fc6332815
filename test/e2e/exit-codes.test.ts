// The built daemon's exits an operator relies on: a busy port and a failed stop step each have their own code and one clear line.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, killAllDaemons, spawnDaemon, startDaemon } from "./daemon.js";
import { makeWorkDir, removeWorkDirs, testConfig, writeConfig } from "./fixtures.js";

/** sysexits codes documented in the README's exit-code table. */
const EX_UNAVAILABLE = 69;
const EX_CANTCREAT = 73;
const EX_IOERR = 74;

beforeAll(() => ensureBuilt(), 120_000);

afterEach(async () => {
  await killAllDaemons();
  removeWorkDirs();
});

describe("exit codes (spawned from dist)", () => {
  it("a second daemon on a busy port: one fatal line, exit 69, nothing polled or warmed up", async () => {
    const first = makeWorkDir();
    writeConfig(first, testConfig(first));
    const running = await startDaemon(first.configFile, { cwd: first.dir });

    const other = makeWorkDir(); // its own state.dir: only the port is in the way
    writeConfig(other, {
      ...testConfig(other),
      monitors: { offchain: [{ pair: "BTC/USD", periodMs: 200 }], warmup: { enabled: true } },
    });
    const second = spawnDaemon(
      ["run", "--config", other.configFile, "--set", `server.port=${running.port}`],
      {
        cwd: other.dir,
      },
    );
    expect(await second.waitExit(10_000)).toEqual({ code: EX_UNAVAILABLE, signal: null });
    const lines = second.logs.items;
    expect(lines.map((line) => line.msg)).toEqual([
      `could not start: cannot listen on 127.0.0.1:${running.port} (server.host, server.port): the port is already in use by another process`,
    ]);
    expect(lines[0]).toMatchObject({ level: 60, code: "PM_ERR_LISTEN", exitCode: EX_UNAVAILABLE });
    expect(second.stderr()).toBe("");
    expect((await fetch(`${running.httpUrl}/healthz`)).status).toBe(200);
  });

  it("an unusable state directory: one fatal line naming state.dir, exit 73", async () => {
    const work = makeWorkDir();
    const blocker = join(work.dir, "not-a-directory");
    writeFileSync(blocker, "");
    writeConfig(work, { ...testConfig(work), state: { dir: join(blocker, "state") } });
    const daemon = spawnDaemon(["run", "--config", work.configFile, "--set", "server.port=0"], {
      cwd: work.dir,
    });
    expect(await daemon.waitExit(10_000)).toEqual({ code: EX_CANTCREAT, signal: null });
    const lines = daemon.logs.items;
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 60,
      code: "PM_ERR_STATE",
      errno: "ENOTDIR",
      exitCode: EX_CANTCREAT,
    });
    expect(lines[0]?.msg).toMatch(
      /^could not start: cannot use the state directory .*\(state\.dir\): ENOTDIR/,
    );
  });

  it("simulate on a busy port: one line on stderr, exit 69, no stack trace", async () => {
    const work = makeWorkDir();
    writeConfig(work, testConfig(work));
    const running = await startDaemon(work.configFile, { cwd: work.dir });
    const simulate = spawnDaemon(["simulate", "--port", String(running.port)], { cwd: work.dir });
    expect(await simulate.waitExit(10_000)).toEqual({ code: EX_UNAVAILABLE, signal: null });
    expect(simulate.stderr()).toBe(
      `pragma-monitor simulate: cannot listen on 127.0.0.1:${running.port} (--host, --port): the port is already in use by another process\n`,
    );
    expect(simulate.logs.items).toEqual([]);
  });

  it("a stop in which a step failed exits 74 and names the step", async () => {
    const work = makeWorkDir();
    writeConfig(work, testConfig(work));
    const daemon = await startDaemon(work.configFile, { cwd: work.dir });
    // the alert checkpoint cannot replace a directory: the stop's checkpoint step fails
    const checkpoint = join(work.stateDir, "alerts.json");
    rmSync(checkpoint, { force: true });
    mkdirSync(checkpoint);
    daemon.signal("SIGTERM");
    expect(await daemon.waitExit(5_000)).toEqual({ code: EX_IOERR, signal: null });
    const failed = daemon.logs.items.find((line) => line.msg === "error while stopping: checkpoint");
    expect(failed).toMatchObject({ level: 50, step: "checkpoint", err: { code: "EISDIR" } });
    const stopped = daemon.logs.items.at(-1);
    expect(stopped).toMatchObject({
      msg: "stopped, but some stop steps failed",
      failedSteps: ["checkpoint"],
      exitCode: EX_IOERR,
    });
  });
});
