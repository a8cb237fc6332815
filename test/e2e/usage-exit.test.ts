// The exit code the shell sees for a usage error, from the built program: 64 (EX_USAGE), as the README says.
import { spawnSync } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { mainUsage } from "../../src/cli/main-usage.js";
import { VERSION } from "../../src/version.js";
import { MAIN_JS, ROOT, ensureBuilt } from "./daemon.js";

beforeAll(() => ensureBuilt(), 120_000);

/** Runs the built main with the arguments and returns what the shell would see. */
const main = (...args: string[]) =>
  spawnSync(process.execPath, [MAIN_JS, ...args], { cwd: ROOT, encoding: "utf8", timeout: 30_000 });

describe("usage errors exit 64 (EX_USAGE), as the README says", () => {
  it.each([
    [["tail", "--min-severity", "loud"]],
    [["tail", "--since", "-1"]],
    [["run", "--bogus"]],
    [["check-config", "--set", "novalue"]],
    [["simulate", "--port", "x"]],
    [["silence"]],
    [["silence", "add", "pair=~.*", "--comment", "matches everything", "--author", "ana"]],
    [["silence", "ls", "--url", "ws://127.0.0.1:8787/ws"]],
    [["no-such-command"]],
  ])("pragma-monitor %j exits 64", (argv) => {
    expect(main(...argv).status).toBe(64);
  });

  it("pragma-monitor --help prints the generated usage and exits 0", () => {
    expect(main("--help")).toMatchObject({ status: 0, stdout: mainUsage(VERSION) });
  });
});
