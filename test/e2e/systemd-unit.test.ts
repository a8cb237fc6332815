// systemd/pragma-monitor.service: `systemd-analyze verify` clean, hardening score, and the settings the daemon relies on.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { ROOT } from "./daemon.js";

const UNIT = join(ROOT, "systemd", "pragma-monitor.service");
const unitText = readFileSync(UNIT, "utf8");

/** `Key=value` lines of the unit, every value kept (systemd allows repeated keys). */
function settings(text: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const line of text.split("\n")) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (match === null) continue;
    const [, key = "", value = ""] = match;
    map.set(key, [...(map.get(key) ?? []), value]);
  }
  return map;
}
const unit = settings(unitText);
const one = (key: string): string => {
  const values = unit.get(key) ?? [];
  expect(values, key).toHaveLength(1);
  return values[0] ?? "";
};

/** systemd time span in seconds ("30s", "1min", "90"). */
function seconds(span: string): number {
  const match = /^(\d+)\s*(s|sec|min|m)?$/.exec(span);
  if (match === null) throw new Error(`unsupported time span ${span}`);
  return Number(match[1]) * (match[2] === "min" || match[2] === "m" ? 60 : 1);
}

const analyze = spawnSync("systemd-analyze", ["--version"], { encoding: "utf8" });
const analyzeAvailable = analyze.status === 0;
const offlineSecurity =
  analyzeAvailable &&
  spawnSync("systemd-analyze", ["security", "--help"], { encoding: "utf8" }).stdout.includes("--offline");

const work = mkdtempSync(join(tmpdir(), "pm-unit-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The unit with ExecStart's /usr/bin/node pointed at this machine's node (verify checks the binary exists). */
function localCopy(): string {
  const path = join(work, "pragma-monitor.service");
  writeFileSync(path, unitText.replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${process.execPath} `));
  return path;
}

describe("systemd/pragma-monitor.service", () => {
  it.skipIf(!analyzeAvailable)(
    "passes systemd-analyze verify with no warning about the unit (skipped: no systemd-analyze)",
    () => {
      const copy = localCopy();
      const result = spawnSync("systemd-analyze", ["verify", copy], { encoding: "utf8" });
      const aboutUnit = `${result.stdout}${result.stderr}`
        .split("\n")
        .filter((line) => line.includes("pragma-monitor.service"));
      expect(aboutUnit).toEqual([]);
      expect(result.status).toBe(0);
    },
  );

  it.skipIf(!offlineSecurity)(
    "keeps its hardening: systemd-analyze security exposure ≤ 2.0 (skipped: no `security --offline`)",
    () => {
      const result = spawnSync("systemd-analyze", ["security", "--offline=true", "--no-pager", localCopy()], {
        encoding: "utf8",
      });
      const match = /Overall exposure level for \S+: (\d+(?:\.\d+)?)/.exec(result.stdout);
      expect(match, result.stdout + result.stderr).not.toBeNull();
      expect(Number(match?.[1])).toBeLessThanOrEqual(2);
    },
  );

  it("is a notify service whose notifications may come from the systemd-notify child", () => {
    expect(one("Type")).toBe("notify");
    expect(one("NotifyAccess")).toBe("all"); // src/systemd.ts sends through `systemd-notify --pid`
    expect(seconds(one("WatchdogSec"))).toBeGreaterThanOrEqual(10); // pinged every WatchdogSec/2 from a 1 s tick
    expect(one("RestrictAddressFamilies").split(/\s+/)).toEqual(
      expect.arrayContaining(["AF_UNIX", "AF_INET"]),
    );
  });

  it("gives SIGTERM time to drain and reloads with SIGHUP", () => {
    const { config } = loadConfig({ env: {}, argvOverrides: {}, cwd: ROOT });
    const drainS = config.shutdown.drainTimeoutMs / 1000;
    // main.ts exits on its own at most drain + 1 s after SIGTERM; systemd must not SIGKILL before that
    expect(seconds(one("TimeoutStopSec"))).toBeGreaterThan(drainS + 1);
    expect(one("KillMode")).toBe("mixed");
    expect(one("ExecReload")).toMatch(/kill -HUP \$MAINPID$/);
    expect(one("ExecStart")).toMatch(/dist\/src\/main\.js run --config \S+$/);
  });

  it("restarts on crashes but not on an invalid configuration (78) or an unusable state directory (73)", () => {
    expect(one("Restart")).toBe("on-failure");
    expect(one("RestartPreventExitStatus").split(/\s+/)).toEqual(["73", "78"]);
  });

  it("keeps state in its StateDirectory ($STATE_DIRECTORY is read by the config loader)", () => {
    expect(one("StateDirectory")).toBe("pragma-monitor");
    expect(one("ProtectSystem")).toBe("strict");
    const { config } = loadConfig({
      env: { STATE_DIRECTORY: "/var/lib/pragma-monitor" },
      argvOverrides: {},
      cwd: ROOT,
    });
    expect(config.state.dir).toBe("/var/lib/pragma-monitor");
  });
});
