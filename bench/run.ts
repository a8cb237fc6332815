// `npm run bench`: runs every bench (or those named: `npm run bench -- pipeline ws`; opt-in ones only when named), prints them and writes bench/RESULTS.md.
import { writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { main as cluster } from "./cluster-bench.js";
import { runDecodeBench } from "./decode-bench.js";
import { main as latency } from "./latency-bench.js";
import { main as memory } from "./memory-bench.js";
import { main as pipeline } from "./pipeline-bench.js";
import { main as pipelineCounts } from "./pipeline-counts.js";
import { main as polling } from "./polling-bench.js";
import { atLeast, atMost, formatValue, printResult, type BenchResult } from "./lib/result.js";
import { ensureCliBuilt } from "./lib/shipped.js";
import { main as replay } from "./replay-bench.js";
import { runSimulatorBench } from "./simulator-bench.js";
import { main as streaming } from "./streaming-bench.js";
import { main as wholePoll } from "./whole-poll-bench.js";
import { main as ws } from "./ws-fanout-bench.js";

type Bench = (args: readonly string[]) => Promise<BenchResult>;

/** The existing decode bench, reported in the common shape. */
const decode: Bench = (args) => {
  const r = runDecodeBench({ bodies: 100_000, rounds: args.includes("--quick") ? 3 : 9, seed: 42 });
  return Promise.resolve({
    name: "decode",
    title: "pair-price decode (parse + validate + map) vs JSON.parse alone",
    method: [`${r.bodies.toLocaleString("en-US")} bodies, ${r.rounds} interleaved rounds, medians`],
    figures: [
      { label: "JSON.parse alone", value: r.parseMedianMs, unit: "ms" },
      { label: "full decode", value: r.decodeMedianMs, unit: "ms" },
      { label: "decodes", value: r.decodesPerSecond, unit: "bodies/s" },
    ],
    checks: [atMost("decode vs JSON.parse", r.ratio, 2, "×")],
  });
};

/** The existing simulator throughput bench, reported in the common shape. */
const simulator: Bench = async (args) => {
  const r = await runSimulatorBench({
    durationMs: args.includes("--quick") ? 2_000 : 5_000,
    concurrency: 32,
  });
  return {
    name: "simulator",
    title: "simulator pair-price req/s over loopback vs a bare node:http server (servers in child processes)",
    method: ["32 keep-alive undici connections per target, sequential targets"],
    figures: [
      { label: "bare node:http constant body", value: r.bareReqPerS, unit: "req/s" },
      {
        label: "simulator live pair price",
        value: r.simulatorReqPerS,
        unit: `req/s (${r.ratio.toFixed(2)}× bare)`,
      },
      {
        label: "simulator uncached (historical)",
        value: r.uncachedReqPerS,
        unit: `req/s (${r.uncachedRatio.toFixed(2)}× bare)`,
      },
    ],
    checks: [atLeast("simulator live throughput", r.simulatorReqPerS, 5_000, " req/s")],
  };
};

/** In running order: the shipped-daemon benches first (the longest and the ones DESIGN §7 is mostly about). */
const BENCHES: Readonly<Record<string, Bench>> = {
  polling,
  streaming,
  latency,
  memory,
  ws,
  pipeline,
  "whole-poll": wholePoll,
  replay,
  decode,
  simulator,
};

/** Benches that run only when named: they need extra tools (valgrind, nats-server) or take long. */
const OPT_IN: Readonly<Record<string, Bench>> = { "pipeline-counts": pipelineCounts, cluster };

/** RESULTS.md: command, date, machine, then each bench's method, figures and target verdicts. */
function renderMarkdown(
  command: string,
  results: readonly BenchResult[],
  load: { readonly before: string; readonly after: string; readonly minutes: number },
): string {
  const cpu = cpus();
  const lines = [
    "# Benchmark results",
    "",
    `- command: \`${command}\``,
    `- date: ${new Date().toISOString()}`,
    `- machine: ${cpu.length} × ${cpu[0]?.model ?? "unknown CPU"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, shared and noisy: compare the side-by-side ratios, not absolute times`,
    `- node: ${process.version} (${process.platform}/${process.arch})`,
    `- load average (1, 5, 15 min) before: ${load.before}; after: ${load.after}; run took ${load.minutes.toFixed(0)} min`,
    "",
    "| bench | check | measured | target | verdict |",
    "|---|---|---|---|---|",
    ...results.flatMap((r) =>
      r.checks.map(
        (c) =>
          `| ${r.name} | ${c.what} | ${formatValue(c.value)}${c.unit} | ${c.target} | ${c.pass ? "pass" : "**miss**"} |`,
      ),
    ),
    "",
    "Methods, one line each:",
    "",
    ...results.map((r) => `- **${r.name}**: ${(r.method[0] ?? "").replace(/^one line: /, "")}`),
  ];
  for (const r of results) {
    lines.push("", `## ${r.name}: ${r.title}`, "", ...r.method.map((m) => `- ${m}`), "");
    lines.push("| figure | value |", "|---|---|");
    for (const f of r.figures) lines.push(`| ${f.label} | ${formatValue(f.value)} ${f.unit} |`);
    for (const n of r.notes ?? []) lines.push("", `Note: ${n}`);
  }
  return `${lines.join("\n")}\n`;
}

/** Where the results so far are written after each bench (bench/RESULTS.md is written at the end). */
const PARTIAL = join(tmpdir(), "pragma-monitor-bench-RESULTS.partial.md");

/** Run the selected benches in order; memory soak defaults to 60 s here (`--soak-seconds N` to change). */
export async function main(argv: readonly string[]): Promise<void> {
  const names = argv.filter((a, i) => !a.startsWith("--") && argv[i - 1] !== "--soak-seconds");
  const known: Readonly<Record<string, Bench>> = { ...BENCHES, ...OPT_IN };
  const unknown = names.filter((n) => !(n in known));
  if (unknown.length > 0)
    throw new Error(`unknown bench(es): ${unknown.join(", ")}; known: ${Object.keys(known).join(", ")}`);
  const args = argv.includes("--soak-seconds") ? argv : [...argv, "--soak-seconds", "60"];
  const results: BenchResult[] = [];
  const command = `npm run bench${argv.length > 0 ? ` -- ${argv.join(" ")}` : ""}`;
  const loadNow = (): string =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(", ");
  const before = loadNow();
  const startMs = Date.now();
  ensureCliBuilt();
  for (const name of names.length > 0 ? names : Object.keys(BENCHES)) {
    // in-process benches start from a collected heap, so one bench's garbage is not billed to the next
    // (`npm run bench` passes --expose-gc)
    (globalThis as { gc?: () => void }).gc?.();
    process.stdout.write(`running ${name}...\n`);
    const result = await known[name]!(args);
    printResult(result);
    results.push(result);
    // the results so far, outside bench/ (a file written under bench/ would make the bin rebuild dist/ mid-run)
    const load = { before, after: loadNow(), minutes: (Date.now() - startMs) / 60_000 };
    writeFileSync(PARTIAL, renderMarkdown(command, results, load));
  }
  const relative = import.meta.url.endsWith(".ts") ? "./RESULTS.md" : "../../bench/RESULTS.md";
  const out = fileURLToPath(new URL(relative, import.meta.url));
  const load = { before, after: loadNow(), minutes: (Date.now() - startMs) / 60_000 };
  writeFileSync(out, renderMarkdown(command, results, load));
  process.stdout.write(`wrote ${out}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv.slice(2));
