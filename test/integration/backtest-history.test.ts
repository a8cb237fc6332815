// backtest --from --to against the embedded simulator: candles paged from its candlestick endpoint, fed through the
// daemon's engine, each rule's candle verdict, determinism, bad input (unknown pair, empty range, --from after --to)
// and the progress bar (drawn on a terminal only).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runBacktest } from "../../src/cli/backtest.js";
import { tempDir, writeConfig } from "../backtest/helpers.js";

const HOUR_MS = 3_600_000;
/** A 6 h range a day ago, on whole hours: inside the simulator's 15 days of history, the same for every run here. */
const TO_MS = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 24 * HOUR_MS;
const FROM_MS = TO_MS - 6 * HOUR_MS;

/** Off-chain BTC/USD and ETH/USD on the embedded simulator, a tight 1 min move rule, and rules candles cannot decide. */
function config(pairs: readonly string[] = ["BTC/USD", "ETH/USD"]): Record<string, unknown> {
  return {
    upstream: { url: "simulator" },
    monitors: {
      offchain: pairs.map((pair) => ({ pair, periodMs: 1000 })),
      onchain: [{ pair: "BTC/USD", network: "starknet-mainnet", periodMs: 5000 }],
      publishers: [],
      funding: [],
      vaults: [],
    },
    rules: [
      { kind: "price_change", id: "move", windowMs: 60_000, threshold: 0.002, clearThreshold: 0.001 },
      { kind: "price_change", id: "fast", windowMs: 10_000, threshold: 0.002, clearThreshold: 0.001 },
      { kind: "stale_price", id: "stale" },
      { kind: "upstream_error", threshold: 2 },
    ],
    sinks: [],
  };
}

/** Run the CLI in history mode, capturing its output; `tty` says whether stderr is a terminal. */
async function run(
  args: string[],
  options: { config?: Record<string, unknown>; tty?: boolean } = {},
): Promise<{ code: number; out: string; err: string }> {
  const file = writeConfig(tempDir(), options.config ?? config());
  let out = "";
  let err = "";
  const code = await runBacktest(["--config", file, ...args], {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t), isTTY: options.tty ?? false },
    env: {},
    cwd: process.cwd(),
  });
  return { code, out, err };
}

const RANGE = ["--from", new Date(FROM_MS).toISOString(), "--to", String(TO_MS)];

describe("pragma-monitor backtest --from --to (candles from the embedded simulator)", () => {
  it("says per rule what candles decide, feeds the candles through the engine, and is byte-identical in --json", async () => {
    const text = await run(RANGE);
    expect(text.err).toBe("");
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/move\s+approximate: prices between/);
    expect(text.out).toMatch(/fast\s+approximate: window 10s shorter than a 1min candle/);
    expect(text.out).toMatch(/stale\s+not backtestable from candles: candles carry no source timestamps/);
    expect(text.out).toContain("onchain:starknet-mainnet:BTC/USD:median: onchain targets are not in candles");
    // 6 h of 1 min candles of two pairs, four prices each (the candle at --to included)
    expect(text.out).toContain(`${2 * (6 * 60 + 1) * 4} observations`);

    const first = await run([...RANGE, "--json"]);
    const second = await run([...RANGE, "--json"]);
    expect(second.out).toBe(first.out);
    const report = JSON.parse(first.out) as {
      verdicts: { rule: string; verdict: string }[];
      rules: { rule: string; fired: number }[];
      complete: boolean;
    };
    expect(report.complete).toBe(true);
    expect(report.verdicts.map((v) => [v.rule, v.verdict])).toEqual([
      ["move", "approximate"],
      ["fast", "approximate"],
      ["stale", "not backtestable from candles"],
      ["upstream_error", "not backtestable from candles"],
    ]);
    // the tight move rule fires on the simulator's walk; rules candles cannot decide never run
    expect(report.rules.some((r) => r.rule === "move" && r.fired > 0)).toBe(true);
    expect(report.rules.every((r) => r.rule === "move" || r.rule === "fast")).toBe(true);

    // --html charts the candle run too: a chart per fed pair, with the firing markers of the move rule
    const htmlFile = join(tempDir(), "candles.html");
    const withHtml = await run([...RANGE, "--html", htmlFile]);
    expect(withHtml.code).toBe(0);
    const html = readFileSync(htmlFile, "utf8");
    expect(html).toContain("Backtest of 1min candles");
    for (const pair of ["BTC/USD", "ETH/USD"])
      expect(html).toContain(`data-target="offchain:${pair}:spot:median:1s"`);
    expect(html).toMatch(/class="marker firing"/);
  }, 60_000);

  it("names a pair the API does not know, counts it, goes on with the others and exits 65", async () => {
    const { code, out } = await run([...RANGE, "--json"], { config: config(["BTC/USD", "ZZZ/USD"]) });
    expect(code).toBe(65);
    const report = JSON.parse(out) as { problems: { kind: string; message: string }[]; observations: number };
    expect(report.problems).toEqual([
      {
        kind: "candles",
        message: "the API has no candles of ZZZ/USD at all (an unknown pair?): its targets are skipped",
      },
    ]);
    expect(report.observations).toBe((6 * 60 + 1) * 4);
  }, 60_000);

  it("names each pair without candles in a range before the history and exits 65", async () => {
    const fromMs = FROM_MS - 40 * 24 * HOUR_MS;
    const { code, out } = await run(["--from", String(fromMs), "--to", String(fromMs + HOUR_MS)]);
    expect(code).toBe(65);
    expect(out).toContain("Problems (2): the result is incomplete");
    expect(out).toMatch(/the API has no candles of BTC\/USD for \S+ → \S+: its targets are skipped/);
    expect(out).toMatch(/the API has no candles of ETH\/USD for /);
  }, 60_000);

  it("refuses --from after --to and an interval without candles (usage, 64)", async () => {
    const after = await run(["--from", String(TO_MS), "--to", String(FROM_MS)]);
    expect(after.code).toBe(64);
    expect(after.err).toContain(`--from (${TO_MS}) is after --to (${FROM_MS})`);
    const interval = await run([...RANGE, "--candles", "5min"]);
    expect(interval.code).toBe(64);
    expect(interval.err).toContain('--candles: "5min" is not a candle interval');
    const neither = await run(["--from", String(FROM_MS)]);
    expect(neither.code).toBe(64);
    expect(neither.err).toContain("--recording DIR, or --from T and --to T (candles), is required");
  });

  it("draws a progress bar on stderr only when it is a terminal", async () => {
    const tty = await run([...RANGE, "--json"], { tty: true });
    expect(tty.err).toContain("fetching candles [");
    expect(tty.err).toContain("replaying candles [");
    expect(tty.err).toContain("100%");
    const pipe = await run([...RANGE, "--json"], { tty: false });
    expect(pipe.err).toBe("");
    expect(pipe.out).toBe(tty.out);
  }, 60_000);
});
