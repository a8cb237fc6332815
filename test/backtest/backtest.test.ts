// The backtest CLI on recordings the tests write: what fires, what each sink would get, determinism, and bad input.
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { runBacktest } from "../../src/cli/backtest.js";
import type { RecordLine } from "../../src/record/format.js";
import { failedPoll, okPoll, pairPriceBody, tempDir, writeConfig, writeRecording } from "./helpers.js";

const T0 = Date.parse("2026-11-20T10:00:00.000Z");
const TARGET = "offchain:ETH/USD:spot:median:1s";

/** Config: one ETH/USD target polled every second, a 2 % move rule, upstream_error after 2 failures, a rate-limited webhook. */
const CONFIG = {
  upstream: { url: "http://127.0.0.1:1" },
  monitors: {
    offchain: [{ pair: "ETH/USD", periodMs: 1000 }],
    onchain: [],
    publishers: [],
    funding: [],
    vaults: [],
    warmup: { enabled: false },
  },
  rules: [
    { kind: "price_change", id: "move", windowMs: 10_000, threshold: 0.02 },
    { kind: "upstream_error", threshold: 2 },
  ],
  sinks: [
    {
      kind: "webhook",
      name: "hook",
      url: "http://127.0.0.1:9/hook",
      secret: "0123456789abcdef",
      minSeverity: "info",
      ratePerMinute: 1,
      burst: 1,
    },
  ],
};

/** 60 s of polls: a 5 % step at 20 s (fires, resolves after the window), a 3-poll outage at 40 s. */
function incident(): RecordLine[] {
  const lines: RecordLine[] = [{ type: "start", atMs: T0, tickMs: 1000, upstream: "http://127.0.0.1:1" }];
  for (let s = 1; s <= 60; s++) {
    const atMs = T0 + s * 1000;
    if (s >= 40 && s < 43) lines.push(...failedPoll(TARGET, atMs));
    else lines.push(...okPoll(TARGET, atMs, pairPriceBody("ETH/USD", s < 20 ? 2000 : 2100, atMs - 100)));
  }
  return lines;
}

/** Run the CLI, capturing its output. */
function run(args: string[]): { code: number; out: string; err: string } {
  let out = "";
  let err = "";
  const code = runBacktest(args, {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
    env: {},
    cwd: process.cwd(),
  });
  if (typeof code !== "number") throw new Error("a recording backtest runs synchronously");
  return { code, out, err };
}

describe("pragma-monitor backtest --recording", () => {
  it("reports fired rules, time firing, notifications per sink after its rate limit, and the timeline", async () => {
    const dir = tempDir();
    const rec = join(dir, "rec");
    await writeRecording(rec, incident());
    const config = writeConfig(dir, CONFIG);
    const { code, out } = run(["--config", config, "--recording", rec, "--json"]);
    expect(code).toBe(0);
    const report = JSON.parse(out) as {
      rules: { rule: string; fired: number; firingMs: number }[];
      sinks: { name: string; notifications: number; alerts: number; repeats: number }[];
      timeline: { rule: string; status: string }[];
      complete: boolean;
    };
    expect(report.complete).toBe(true);
    expect(report.timeline.map((t) => `${t.rule} ${t.status}`)).toEqual([
      "move firing",
      "move resolved",
      "upstream_error firing",
      "upstream_error resolved",
    ]);
    const move = report.rules.find((r) => r.rule === "move");
    expect(move?.fired).toBe(1);
    // fires at 20 s, resolves once the window no longer holds the old price (~10 s later)
    expect(move?.firingMs).toBeGreaterThanOrEqual(9_000);
    expect(move?.firingMs).toBeLessThanOrEqual(11_000);
    // the shipped grouping (one group, 5 s wait, 60 s interval): the move's firing goes alone 5 s after it; the
    // other three wait for the group interval and leave together in the group's next notification
    expect(report.sinks).toEqual([
      expect.objectContaining({ name: "hook", notifications: 2, alerts: 4, repeats: 0 }),
    ]);
  });

  it("counts one notification per transition with grouping off, the rate limit only delaying them", async () => {
    const dir = tempDir();
    const rec = join(dir, "rec");
    await writeRecording(rec, incident());
    const config = writeConfig(dir, { ...CONFIG, grouping: { groupBy: ["..."] } });
    const { code, out } = run(["--config", config, "--recording", rec, "--json"]);
    expect(code).toBe(0);
    const report = JSON.parse(out) as { sinks: { notifications: number; alerts: number }[] };
    expect(report.sinks).toEqual([expect.objectContaining({ notifications: 4, alerts: 4 })]);
  });

  it("gives byte-identical --json for the same inputs", async () => {
    const dir = tempDir();
    const rec = join(dir, "rec");
    await writeRecording(rec, incident(), 4_000);
    expect(readdirSync(rec).length).toBeGreaterThan(3); // rotated into several files
    const config = writeConfig(dir, CONFIG);
    const a = run(["--config", config, "--recording", rec, "--json"]);
    const b = run(["--config", config, "--recording", rec, "--json"]);
    expect(a.code).toBe(0);
    expect(a.out).toBe(b.out);
    expect(a.out.length).toBeGreaterThan(500);
  });

  it("--set rules.<id>.<field> and --compare show the difference in pages per sink", async () => {
    const dir = tempDir();
    const rec = join(dir, "rec");
    await writeRecording(rec, incident());
    const config = writeConfig(dir, CONFIG);
    const looser = run([
      "--config",
      config,
      "--recording",
      rec,
      "--json",
      "--set",
      "rules.move.threshold=0.1",
    ]);
    const timeline = (JSON.parse(looser.out) as { timeline: { rule: string }[] }).timeline;
    expect(timeline.map((t) => t.rule)).toEqual(["upstream_error", "upstream_error"]);
    const other = join(dir, "other.json");
    writeFileSync(
      other,
      JSON.stringify({ ...CONFIG, grouping: { groupBy: ["..."] } }), // grouping off: a page per transition
    );
    const compared = run(["--config", config, "--recording", rec, "--compare", other]);
    expect(compared.code).toBe(0);
    expect(compared.out).toMatch(/sink\s+pages A\s+pages B\s+difference\n\s*hook\s+2\s+4\s+\+2/);
    expect(run(["--config", config, "--recording", rec, "--set", "rules.nope.threshold=1"]).code).toBe(78);
  });

  it("bad input: names the file and line or the target, counts it, goes on, exits 65", async () => {
    const dir = tempDir();
    const rec = join(dir, "rec");
    const lines = incident();
    // a body the decoder rejects, in a poll that says it succeeded
    lines.push(...okPoll(TARGET, T0 + 61_000, '{"pair_id":"ETH/USD"}'));
    await writeRecording(rec, lines);
    // a second file: a corrupt line, then a file cut short mid-line
    const second = join(rec, "rec-20261120T100200000Z-000001.jsonl.gz");
    const good = JSON.stringify(okPoll(TARGET, T0 + 62_000, pairPriceBody("ETH/USD", 2100, T0 + 62_000))[1]);
    const whole = gzipSync(
      `not json\n${good}\n{"type":"poll","atMs":${T0 + 63_000},"target":"${TARGET}","ok":true}\n`,
    );
    writeFileSync(second, whole.subarray(0, whole.length - 12)); // cut short, as by kill -9
    const config = writeConfig(dir, {
      ...CONFIG,
      monitors: {
        ...CONFIG.monitors,
        offchain: [...CONFIG.monitors.offchain, { pair: "BTC/USD", periodMs: 1000 }],
      },
    });
    const { code, out } = run(["--config", config, "--recording", rec]);
    expect(code).toBe(65);
    expect(out).toMatch(
      /rec-20261120T100000000Z-000001\.jsonl\.gz:\d+: the decoder rejects the body of offchain:ETH\/USD/,
    );
    expect(out).toMatch(/rec-20261120T100200000Z-000001\.jsonl\.gz:1: not JSON/);
    expect(out).toMatch(
      /rec-20261120T100200000Z-000001\.jsonl\.gz:\d: (truncated line|compressed stream damaged)/,
    );
    expect(out).toContain("target offchain:BTC/USD:spot:median:1s is in the config but not in the recording");
    expect(out).toMatch(/Problems \(\d+\)/);
    // the run went on: the step still fired
    expect(out).toMatch(/move\s+\S*pair=ETH\/USD\S*\s+1\s/);
  });

  it("usage errors: --from after --to, no recording", () => {
    const r = run([
      "--recording",
      "/nonexistent",
      "--from",
      "2026-11-20T11:00:00Z",
      "--to",
      "2026-11-20T10:00:00Z",
    ]);
    expect(r.code).toBe(64);
    expect(r.err).toContain("--from (2026-11-20T11:00:00Z) is after --to (2026-11-20T10:00:00Z)");
    expect(run(["--recording", join(tempDir(), "missing")]).code).toBe(66);
  });
});
