// The --html report: a chart per target with a marker per transition, escaped config and data, byte-identical output; the bounded price series.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderHtmlReport } from "../../src/backtest/html-report.js";
import { boundedSeries } from "../../src/backtest/price-series.js";
import type { BacktestReport } from "../../src/backtest/summary.js";
import { runBacktest } from "../../src/cli/backtest.js";
import type { AlertPayload } from "../../src/domain/events.js";
import { tempDir, writeConfig, writeRecording } from "./helpers.js";
import { BTC, ETH, HTML_CONFIG, htmlRecording } from "./html-fixture.js";

/** A recording and its config in a fresh directory. */
async function prepare(): Promise<{ dir: string; rec: string; config: string }> {
  const dir = tempDir();
  const rec = join(dir, "rec");
  await writeRecording(rec, htmlRecording());
  return { dir, rec, config: writeConfig(dir, HTML_CONFIG) };
}

/** Run the CLI with --json and --html FILE; the JSON report, the HTML and the exit code. */
function backtestWithHtml(
  { dir, rec, config }: { dir: string; rec: string; config: string },
  file = "report.html",
): { code: number; json: BacktestReport; html: string } {
  const htmlFile = join(dir, file);
  let out = "";
  const code = runBacktest(["--config", config, "--recording", rec, "--json", "--html", htmlFile], {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: () => true },
    env: {},
    cwd: dir,
  });
  if (typeof code !== "number") throw new Error("a recording backtest runs synchronously");
  return { code, json: JSON.parse(out) as BacktestReport, html: readFileSync(htmlFile, "utf8") };
}

/** The chart section of a target in the page. */
function sectionOf(html: string, target: string): string {
  const start = html.indexOf(`<section class="target" data-target="${target}">`);
  expect(start).toBeGreaterThanOrEqual(0);
  return html.slice(start, html.indexOf("</section>", start));
}

describe("backtest --html", () => {
  it("charts each target with one marker per transition that concerns it, tables and timeline", async () => {
    const { code, json, html } = backtestWithHtml(await prepare());
    expect(code).toBe(0);
    expect(json.timeline.map((t) => `${t.rule} ${t.status}`)).toEqual([
      "move firing",
      "move resolved",
      "move firing",
      "move resolved",
      "upstream_error firing",
      "upstream_error resolved",
    ]);
    expect(html.match(/<svg class="chart"/g)).toHaveLength(2);
    const eth = sectionOf(html, ETH);
    const btc = sectionOf(html, BTC);
    // ETH: the two moves (firing and resolved each); BTC: its upstream errors
    expect(eth.match(/class="marker firing"/g)).toHaveLength(2);
    expect(eth.match(/class="marker resolved"/g)).toHaveLength(2);
    expect(btc.match(/class="marker firing"/g)).toHaveLength(1);
    expect(btc.match(/class="marker resolved"/g)).toHaveLength(1);
    expect(eth.match(/class="band"/g)).toHaveLength(2);
    // 90 polls each, all charted (well under the bound)
    expect(eth.match(/points="([^"]*)"/)?.[1]?.split(" ")).toHaveLength(90);
    expect(html).toContain("<h2>Rules per target</h2>");
    expect(html).toContain("<td>upstream_error</td>");
    expect(html.match(/<tr><td>2026-11-21T08:/g)).toHaveLength(6);
    // nothing to fetch: no script, no external reference, a CSP that forbids any
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)|src=|href=/);
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
    expect(html).toContain("@media (prefers-color-scheme:dark)");
  });

  it("is byte-identical for the same inputs", async () => {
    const inputs = await prepare();
    const a = backtestWithHtml(inputs, "a.html");
    const b = backtestWithHtml(inputs, "b.html");
    expect(a.html.length).toBeGreaterThan(5_000);
    expect(a.html).toBe(b.html);
  });

  it("escapes pair names, labels, reasons and summaries", () => {
    const hostile = `<script>alert("x")</script>&'`;
    const alert: AlertPayload = {
      fingerprint: "f1",
      status: "firing",
      rule: "price_change",
      severity: "warning",
      labels: { pair: hostile, rule_id: `<img src=x onerror="y">` },
      summary: `</title><b>bold</b>`,
      value: 1,
      threshold: 0.5,
      startsAt: "2026-11-21T08:00:05.000Z",
      endsAt: null,
      reason: "first",
      context: {},
    };
    const at = "2026-11-21T08:00:05.000Z";
    const report: BacktestReport = {
      from: "2026-11-21T08:00:00.000Z",
      to: "2026-11-21T08:00:10.000Z",
      observations: 2,
      rules: [
        {
          rule: alert.labels["rule_id"] ?? "",
          kind: "price_change",
          target: `pair=${hostile}`,
          fingerprint: "f1",
          fired: 1,
          firingMs: 5000,
          flaps: 0,
        },
      ],
      sinks: [
        {
          name: `<i>sink</i>`,
          kind: "webhook",
          notifications: 1,
          alerts: 1,
          repeats: 0,
          silenced: 0,
          filtered: 0,
        },
      ],
      problems: [{ kind: "decode", message: `bad <pre>`, at: `<file>:1` }],
      complete: false,
      timeline: [
        {
          at,
          rule: alert.labels["rule_id"] ?? "",
          target: `pair=${hostile}`,
          fingerprint: "f1",
          status: "firing",
          reason: "first",
          summary: alert.summary,
        },
      ],
    };
    const spec = {
      kind: "offchain",
      id: `offchain:${hostile}`,
      pair: hostile,
      entryType: "spot",
      aggregation: "median",
      interval: "1s",
      expiry: null,
    } as const;
    const html = renderHtmlReport({
      title: `Backtest of ${hostile}`,
      report,
      targets: [spec],
      prices: new Map([
        [
          spec.id,
          [
            { atMs: Date.parse(report.from), price: 1 },
            { atMs: Date.parse(report.to), price: 2 },
          ],
        ],
      ]),
      transitions: [{ seq: 1, atMs: Date.parse(at), alert }],
    });
    expect(html).not.toMatch(/<script|<img|<b>|<i>|<pre>|<file>|<\/title><b/);
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;");
    expect(html).toContain("&lt;img src=x onerror=&quot;y&quot;&gt;");
    expect(html.match(/class="marker firing"/g)).toHaveLength(1);
    expect(html).toContain("incomplete: 1 problems");
  });
});

describe("backtest --compare with --html", () => {
  /** A webhook sink, grouping off: a page per transition. */
  const hook = {
    kind: "webhook",
    name: "hook",
    url: "http://127.0.0.1:9/hook",
    secret: "0123456789abcdef",
    minSeverity: "info",
  };

  it("charts both runs' markers per target and tables the difference in pages per sink", async () => {
    const { dir, rec } = await prepare();
    const grouping = { groupBy: ["..."] };
    const a = writeConfig(dir, { ...HTML_CONFIG, sinks: [hook], grouping }, "a.json");
    // B: a looser move threshold, so only the outage pages
    const looser = HTML_CONFIG.rules.map((r) => (r.kind === "price_change" ? { ...r, threshold: 0.1 } : r));
    const b = writeConfig(dir, { ...HTML_CONFIG, rules: looser, sinks: [hook], grouping }, "b.json");
    const htmlFile = join(dir, "compare.html");
    const io = { stdout: { write: () => true }, stderr: { write: () => true }, env: {}, cwd: dir };
    const code = runBacktest(["--config", a, "--compare", b, "--recording", rec, "--html", htmlFile], io);
    expect(code).toBe(0);
    const html = readFileSync(htmlFile, "utf8");
    expect(html).toMatch(/<p class="muted">A: \S*a\.json · /);
    expect(html).toMatch(/<p class="muted">B: \S*b\.json · /);
    const eth = sectionOf(html, ETH);
    const btc = sectionOf(html, BTC);
    // ETH: A's two moves (firing, resolved each); B fires nothing there
    expect(eth.match(/class="marker firing" data-run="a"/g)).toHaveLength(2);
    expect(eth.match(/class="marker resolved" data-run="a"/g)).toHaveLength(2);
    expect(eth).not.toContain('data-run="b"');
    // BTC: the outage in both runs, B's marked as B's
    expect(btc.match(/class="marker firing" data-run="a"/g)).toHaveLength(1);
    expect(btc.match(/class="marker firing b" data-run="b"/g)).toHaveLength(1);
    expect(btc.match(/class="marker resolved b" data-run="b"/g)).toHaveLength(1);
    expect(btc.match(/class="band b" data-run="b"/g)).toHaveLength(1);
    // pages per sink: A 6 (two moves and the outage, each firing and resolved), B 2
    expect(html).toContain(
      '<h2>Pages per sink: A vs B</h2>\n<table><thead><tr><th>sink</th><th class="n">pages A</th><th class="n">pages B</th><th class="n">difference</th></tr></thead><tbody>\n<tr><td>hook</td><td class="n">6</td><td class="n">2</td><td class="n">-4</td></tr>',
    );
    expect(html).toMatch(/<h2>Timeline · A: \S*a\.json<\/h2>/);
    expect(html).toMatch(/<h2>Timeline · B: \S*b\.json<\/h2>/);
  });
});

describe("boundedSeries", () => {
  it("keeps at most 2 × maxBuckets points, in time order, with every spike", () => {
    const series = boundedSeries(100);
    for (let i = 0; i < 100_000; i++)
      series.push({ atMs: i, price: i === 54_321 ? 9 : i === 77_777 ? -9 : 1 });
    const points = series.points();
    expect(points.length).toBeLessThanOrEqual(200);
    expect(points.length).toBeGreaterThan(50);
    expect(points.map((p) => p.atMs)).toEqual([...points.map((p) => p.atMs)].sort((a, b) => a - b));
    expect(points).toContainEqual({ atMs: 54_321, price: 9 });
    expect(points).toContainEqual({ atMs: 77_777, price: -9 });
  });

  it("keeps every point below the bound", () => {
    const series = boundedSeries(100);
    for (let i = 0; i < 100; i++) series.push({ atMs: i, price: i });
    expect(series.points()).toHaveLength(100);
  });
});

describe("backtest --html FILE that cannot be written", () => {
  it("says which file and exits 73", async () => {
    const { dir, rec, config } = await prepare();
    let err = "";
    const file = join(dir, "missing-dir", "report.html");
    const code = runBacktest(["--config", config, "--recording", rec, "--html", file], {
      stdout: { write: () => true },
      stderr: { write: (t: string) => (err += t) },
      env: {},
      cwd: dir,
    });
    expect(code).toBe(73);
    expect(err).toContain(`cannot write the HTML report ${file}`);
  });
});
