// Pipeline-counts bench (opt-in, needs valgrind): the pipeline bench's work per body counted by cachegrind
// (instructions, simulated cache misses) against JSON.parse. Counts, not times: the host's noise does not move them.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchEntry } from "./lib/child.js";
import { printResult, type BenchResult, type Figure } from "./lib/result.js";

/** Settings of one run. */
export interface PipelineCountsOptions {
  readonly targets: number;
  readonly seconds: number;
  readonly warmups: number;
}

/**
 * Last-level cache simulated: 4 MB, 16-way. The host's L3 is 32 MB but shared with its neighbours;
 * a small last level shows which work depends on data staying cached.
 */
const LAST_LEVEL_MB = 4;

type Job = "parse" | "pipeline";
type Counts = ReadonlyMap<string, number>;

/** The `summary:` totals of a cachegrind output file, by event name (Ir, I1mr, D1mr, DLmw…). */
function parseCachegrindSummary(text: string): Counts {
  const events = /^events:\s*(.+)$/m.exec(text)?.[1]?.trim().split(/\s+/);
  const summary = /^summary:\s*(.+)$/m.exec(text)?.[1]?.trim().split(/\s+/);
  if (events === undefined || summary === undefined || events.length !== summary.length)
    throw new Error("cachegrind output without matching events/summary lines");
  return new Map(events.map((event, i) => [event, Number(summary[i])]));
}

/** One child under cachegrind doing `rounds` measured passes of `job`; its totals. `signal` kills it. */
function cachegrind(
  job: Job,
  rounds: number,
  options: PipelineCountsOptions,
  dir: string,
  signal: AbortSignal,
): Promise<Counts> {
  const out = join(dir, `${job}-${rounds}.out`);
  const args = [
    "--tool=cachegrind",
    "--cache-sim=yes",
    `--LL=${LAST_LEVEL_MB * 2 ** 20},16,64`,
    `--cachegrind-out-file=${out}`,
    process.execPath,
    ...process.execArgv,
    // compilation and GC on the measured thread, so every child tiers up at the same point of its work
    "--single-threaded",
    benchEntry("pipeline-counts-child"),
    job,
    String(rounds),
    String(options.warmups),
    String(options.targets),
    String(options.seconds),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn("valgrind", args, { stdio: ["ignore", "ignore", "pipe"], signal });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      reject(
        error.code === "ENOENT"
          ? new Error("pipeline-counts needs valgrind (Debian: apt-get install valgrind)")
          : error,
      );
    });
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`valgrind exited with ${code}: ${stderr}`));
      else resolve(parseCachegrindSummary(readFileSync(out, "utf8")));
    });
  });
}

/** Per-pass counts of a job: children with one and three measured passes, difference halved (start-up and warm-up cancel out). */
async function perPass(job: Job, options: PipelineCountsOptions, dir: string): Promise<Counts> {
  const children = new AbortController();
  const [one, three] = await Promise.all([
    cachegrind(job, 1, options, dir, children.signal),
    cachegrind(job, 3, options, dir, children.signal),
  ]).catch((error: unknown) => {
    children.abort(); // the other child is not left running
    throw error;
  });
  return new Map([...three].map(([event, total]) => [event, (total - (one.get(event) ?? 0)) / 2]));
}

const sum = (counts: Counts, events: readonly string[]): number =>
  events.reduce((total, event) => total + (counts.get(event) ?? 0), 0);

/**
 * What is compared, as sums of cachegrind events. JSON.parse alone stays in L1 (its L1 misses are
 * within the method's noise, up to ±20 per body), so those get no ratio.
 */
const MEASURES: readonly {
  readonly label: string;
  readonly events: readonly string[];
  readonly ratio: boolean;
}[] = [
  { label: "instructions", events: ["Ir"], ratio: true },
  { label: "L1 instruction misses", events: ["I1mr"], ratio: false },
  { label: "L1 data misses", events: ["D1mr", "D1mw"], ratio: false },
  { label: "last-level misses", events: ["ILmr", "DLmr", "DLmw"], ratio: true },
];

/** Count JSON.parse and the pipeline per body; figures for both and the ratio. */
export async function runPipelineCounts(options: PipelineCountsOptions): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), "pm-bench-counts-"));
  try {
    const pipeline = await perPass("pipeline", options, dir);
    const parse = await perPass("parse", options, dir);
    const bodies = options.targets * options.seconds;
    const figures: Figure[] = MEASURES.flatMap(({ label, events, ratio }) => {
      const baseline = sum(parse, events) / bodies;
      const measured = sum(pipeline, events) / bodies;
      return [
        { label: `${label}: JSON.parse`, value: baseline, unit: ratio ? "per body" : "per body (noise)" },
        {
          label: `${label}: pipeline`,
          value: measured,
          unit: ratio ? `per body (${(measured / baseline).toFixed(1)}× JSON.parse)` : "per body",
        },
      ];
    });
    return {
      name: "pipeline-counts",
      title: "the pipeline bench's work per body under cachegrind vs JSON.parse of the same bodies",
      method: [
        `${bodies.toLocaleString("en-US")} bodies of the pipeline bench (${options.targets} targets × ${options.seconds} simulated s), shipped rules; decode → observe() → tick() as there`,
        `each job in children under valgrind --tool=cachegrind (L1 32 KB, last level ${LAST_LEVEL_MB} MB), node --single-threaded; ${options.warmups} warm-up passes of both jobs, then 1 or 3 measured passes: the difference, halved, is one pass`,
      ],
      figures,
      checks: [],
      notes: [
        "counts, not time: instructions of one build repeat within 0.1-2 % on a busy or a quiet host, so they show what a change does where timings cannot; cache misses move 10-20 % from run to run (heap layout), so judge small changes by instructions; JSON.parse alone keeps its code and data in L1 (its L1 misses are noise, up to ±20 per body); cachegrind models no prefetching, so misses weigh more here than on the CPU",
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Bench entry: 500 targets × 40 s = 20 000 bodies, 4 warm-up passes (~5 minutes: the children run ~50×
 * slower under valgrind). `--quick` is ignored: with fewer bodies, JSON.parse's few misses drown in the
 * children's other work.
 */
export function main(): Promise<BenchResult> {
  return runPipelineCounts({ targets: 500, seconds: 40, warmups: 4 });
}

if (import.meta.url === `file://${process.argv[1]}`) printResult(await main());
