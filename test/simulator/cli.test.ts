// `pragma-monitor simulate`: prints its URL, serves until stopped, rejects bad flags and scenario files.
import { describe, expect, it } from "vitest";
import { request } from "undici";
import { runSimulateCommand } from "../../src/simulator/cli.js";
import { testAgent } from "./helpers.js";

function captureIo(): {
  io: { stdout: { write(s: string): boolean }; stderr: { write(s: string): boolean } };
  out: string[];
  err: string[];
} {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: { write: (s) => out.push(s) > 0 }, stderr: { write: (s) => err.push(s) > 0 } },
    out,
    err,
  };
}

async function waitFor(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !predicate(); i++) await new Promise((resolve) => setImmediate(resolve));
}

describe("runSimulateCommand", () => {
  it("listens, prints the URL, serves requests and exits 0 when stopped", async () => {
    const { io, out } = captureIo();
    const controller = new AbortController();
    const done = runSimulateCommand(
      ["--port", "0", "--seed", "9", "--scenario", "demo", "--speed", "2"],
      io,
      {
        signal: controller.signal,
      },
    );
    await waitFor(() => out.length > 0);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out.join(""))?.[1];
    expect(url).toBeDefined();
    const response = await request(`${url}/node/v1/data/BTC/USD?interval=1s`, { dispatcher: testAgent });
    expect(response.statusCode).toBe(200);
    await response.body.dump();
    controller.abort();
    expect(await done).toBe(0);
    expect(out.join("")).toContain("stopped");
  });

  it("serves N synthetic pairs with --synthetic-pairs N, and not the one after", async () => {
    const { io, out } = captureIo();
    const controller = new AbortController();
    const done = runSimulateCommand(["--synthetic-pairs", "3"], io, { signal: controller.signal });
    await waitFor(() => out.length > 0);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out.join(""))?.[1];
    const status = async (pair: string): Promise<number> => {
      const response = await request(`${url}/node/v1/data/${pair}?interval=1s`, { dispatcher: testAgent });
      await response.body.dump();
      return response.statusCode;
    };
    expect([await status("QAAC/USD"), await status("BTC/USD"), await status("QAAD/USD")]).toEqual([
      200, 200, 404,
    ]);
    controller.abort();
    expect(await done).toBe(0);
  });

  it.each([
    [["--synthetic-pairs", "-1"], 64],
    [["--synthetic-pairs", "1.5"], 64],
    [["--port", "abc"], 64],
    [["--speed", "0"], 64],
    [["--bogus"], 64],
    [["--scenario", "/nonexistent/scenario.json"], 78],
  ])("rejects %j with exit code %i", async (argv, code) => {
    const { io, err } = captureIo();
    expect(await runSimulateCommand(argv, io, { signal: new AbortController().signal })).toBe(code);
    expect(err.join("")).not.toBe("");
  });

  it("prints usage for --help", async () => {
    const { io, out } = captureIo();
    expect(await runSimulateCommand(["--help"], io, { signal: new AbortController().signal })).toBe(0);
    expect(out.join("")).toContain("usage: pragma-monitor simulate");
  });
});
