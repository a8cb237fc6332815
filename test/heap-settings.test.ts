// The daemon's heap settings: applied for `run` before other modules load, they keep V8's young generation small.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const PROBE = fileURLToPath(new URL("./fixtures/heap-probe.ts", import.meta.url));
const MB = 1024 * 1024;

/** The young generation's size after the probe's garbage, in a fresh node started as `pragma-monitor <command>`. */
function newSpaceBytes(command: string): number {
  const out = execFileSync(process.execPath, ["--import", "tsx", PROBE, command], { encoding: "utf8" });
  return Number(out.split(" ")[0]);
}

describe("heap settings", () => {
  it("keep the young generation of `run` small, where V8 lets other commands' grow to 32 MB", () => {
    expect(newSpaceBytes("run")).toBeLessThanOrEqual(8 * MB); // (tsx, loaded before it, may grow it once);
    expect(newSpaceBytes("simulate")).toBeGreaterThanOrEqual(16 * MB); // the probe's garbage would grow it
  }, 30_000);
});
