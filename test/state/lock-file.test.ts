// The state-dir lock refuses a live holder and takes over a dead one's lock.
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { acquireStateLock } from "../../src/state/lock-file.js";

const dir = () => mkdtempSync(join(tmpdir(), "pm-lock-"));

describe("acquireStateLock", () => {
  it("writes our pid and removes the file on release", () => {
    const d = dir();
    const lock = acquireStateLock(d, { pid: 42, isAlive: () => true });
    expect(readFileSync(join(d, "pragma-monitor.pid"), "utf8")).toBe("42\n");
    lock.release();
    expect(existsSync(join(d, "pragma-monitor.pid"))).toBe(false);
  });

  it("refuses while another live process holds it", () => {
    const d = dir();
    acquireStateLock(d, { pid: 1, isAlive: () => true });
    expect(() => acquireStateLock(d, { pid: 2, isAlive: () => true })).toThrow(
      /in use by another pragma-monitor \(pid 1\)/,
    );
  });

  it("takes over a lock whose holder is dead (after kill -9)", () => {
    const d = dir();
    writeFileSync(join(d, "pragma-monitor.pid"), "999\n");
    acquireStateLock(d, { pid: 3, isAlive: (pid) => pid !== 999 });
    expect(readFileSync(join(d, "pragma-monitor.pid"), "utf8")).toBe("3\n");
  });

  it("takes over a lock file with garbage in it", () => {
    const d = dir();
    writeFileSync(join(d, "pragma-monitor.pid"), "not a pid");
    expect(() => acquireStateLock(d, { pid: 4, isAlive: () => true })).not.toThrow();
  });
});
