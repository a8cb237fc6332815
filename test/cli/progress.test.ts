// The progress bar: drawn on a terminal only, advanced per unit, cleared at the end; and on a recording's replay.
import { describe, expect, it } from "vitest";
import { runBacktest } from "../../src/cli/backtest.js";
import { createProgress, withProgress } from "../../src/cli/progress.js";
import * as recordings from "../backtest/helpers.js";

/** A stream capturing what is written. */
function stream(isTTY: boolean): { write(text: string): void; readonly isTTY: boolean; text: string } {
  return {
    isTTY,
    text: "",
    write(text: string) {
      this.text += text;
    },
  };
}

describe("createProgress", () => {
  it("draws the percentage on a terminal, once per change, and clears the line at the end", () => {
    const tty = stream(true);
    const bar = createProgress(tty, "work");
    bar.update(1, 4);
    bar.update(1, 4);
    bar.update(4, 4);
    bar.end();
    const frames = tty.text.split("\r").filter((frame) => frame.startsWith("work"));
    expect(frames).toEqual([`work [${"#".repeat(8)}${"-".repeat(22)}] 25%`, `work [${"#".repeat(30)}] 100%`]);
    expect(tty.text.endsWith("\r")).toBe(true);
  });

  it("writes nothing when the stream is not a terminal", () => {
    const pipe = stream(false);
    const bar = createProgress(pipe, "work");
    bar.update(1, 2);
    bar.end();
    expect(pipe.text).toBe("");
  });

  it("withProgress passes every item through and advances per unit", () => {
    const tty = stream(true);
    const items = [...withProgress(["a1", "a2", "b1", "c1"], (s) => s[0] ?? "", 3, createProgress(tty, "f"))];
    expect(items).toEqual(["a1", "a2", "b1", "c1"]);
    expect(tty.text).toMatch(/ 0%.* 33%.* 66%.* 100%/s);
  });
});

describe("backtest --recording progress", () => {
  const T0 = Date.parse("2026-11-20T10:00:00.000Z");
  const target = "offchain:ETH/USD:spot:median:1s";

  /** Replay a short recording with stderr a terminal or not. */
  async function replay(isTTY: boolean): Promise<{ code: number; err: string }> {
    const dir = recordings.tempDir();
    const lines = [1, 2, 3].flatMap((s) =>
      recordings.okPoll(target, T0 + s * 1000, recordings.pairPriceBody("ETH/USD", 2000, T0)),
    );
    await recordings.writeRecording(dir, [
      { type: "start", atMs: T0, tickMs: 1000, upstream: "x" },
      ...lines,
    ]);
    const config = recordings.writeConfig(dir, {
      upstream: { url: "http://127.0.0.1:1" },
      monitors: recordings.oneOffchainPair("ETH/USD"),
      rules: [{ kind: "price_change", id: "move", windowMs: 10_000, threshold: 0.02 }],
      sinks: [],
    });
    const err = stream(isTTY);
    const code = await runBacktest(["--config", config, "--recording", dir, "--json"], {
      stdout: { write: () => undefined },
      stderr: err,
      env: {},
      cwd: process.cwd(),
    });
    return { code, err: err.text };
  }

  it("draws on a terminal and writes nothing on stderr otherwise", async () => {
    const tty = await replay(true);
    expect(tty.code).toBe(0);
    expect(tty.err).toContain("replaying recording [");
    expect(tty.err).toContain("100%");
    const pipe = await replay(false);
    expect(pipe.code).toBe(0);
    expect(pipe.err).toBe("");
  });
});
