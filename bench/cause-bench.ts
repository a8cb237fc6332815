// Cause bench (opt-in, standalone: `npx tsx bench/cause-bench.ts [--before REF] [--rounds N] [--counts]`): what the
// cluster's cause path costs a member, before (REF, default main) and after (this tree), side by side in one run.
// Three members × 500 targets in one process (cause-bench-child.ts); the cause path is the difference between the
// shipped rules and the same rules without the cause rules (summaries, their JSON, the KV round, the merge, the passes).
import { spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { printResult, type Figure } from "./lib/result.js";
import { median } from "./lib/stats.js";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const TREE = resolve(HERE, "..");
const CHILD = join(HERE, "cause-bench-child.ts");
const SCENARIOS = ["failing", "onset", "healthy", "moving"] as const;
/** Warm-up and measured simulated seconds: the onset is measured from 2 s before the outage through its first 6 s. */
const WINDOWS: Readonly<Record<Scenario, readonly [number, number]>> = {
  failing: [20, 10],
  onset: [8, 8],
  healthy: [20, 10],
  moving: [20, 10],
};
type Scenario = (typeof SCENARIOS)[number];

/** The source tree of `ref` in a temporary directory, sharing this tree's node_modules. */
function checkoutTree(ref: string): { root: string; commit: string } {
  const root = mkdtempSync(join(tmpdir(), "pm-cause-bench-"));
  const commit = execFileSync("git", ["-C", TREE, "rev-parse", "--short", ref], { encoding: "utf8" }).trim();
  execFileSync("sh", [
    "-c",
    `git -C "${TREE}" archive "${commit}" src bench config package.json tsconfig.json | tar -x -C "${root}"`,
  ]);
  symlinkSync(join(TREE, "node_modules"), join(root, "node_modules"));
  return { root, commit };
}

/** Run the child (under `wrapper`, e.g. valgrind, when given); its stdout. */
function runChild(args: readonly string[], wrapper: readonly string[] = []): Promise<string> {
  const command = [...wrapper, process.execPath, "--import", "tsx", CHILD, ...args];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command[0]!, command.slice(1), { cwd: TREE, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err = (err + chunk.toString()).slice(-4000)));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolvePromise(out) : reject(new Error(`cause bench child exited ${code}: ${err}`)),
    );
  });
}

/** CPU ms per simulated second of the cause path (medians of interleaved rounds), and KV writes per second. */
async function timed(root: string, scenario: Scenario, rounds: number) {
  const [warm, measured] = WINDOWS[scenario];
  const out = await runChild([root, "time", scenario, String(rounds), String(warm), String(measured)]);
  const result = JSON.parse(out.trim().split("\n").pop() ?? "{}") as {
    causes: number[];
    none: number[];
    writes: number;
    parts: { summaryMs: number; mergeMs: number; passMs: number; failingPeers: number };
  };
  const causes = median(result.causes);
  const none = median(result.none);
  return { causes, none, path: causes - none, writes: result.writes, parts: result.parts };
}

/** Instructions (cachegrind Ir) of one child run: the warm-up, then `measured` simulated seconds of `job`. */
async function instructions(
  root: string,
  scenario: Scenario,
  job: string,
  measured: number,
): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "pm-cause-counts-"));
  try {
    const file = join(dir, "cg.out");
    await runChild(
      [root, "count", scenario, "1", String(WINDOWS[scenario][0]), String(measured), job],
      ["valgrind", "--tool=cachegrind", "--cache-sim=no", `--cachegrind-out-file=${file}`],
    );
    const summary = /^summary:\s*(\d+)/m.exec(readFileSync(file, "utf8"))?.[1];
    if (summary === undefined) throw new Error("cachegrind output without a summary line");
    return Number(summary);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Instructions per simulated second of the cause path: (causes − none), each as the difference of 8 and 2 measured seconds. */
async function counted(root: string, scenario: Scenario): Promise<number> {
  const perSecond = async (job: string): Promise<number> => {
    const [short, long] = await Promise.all([
      instructions(root, scenario, job, 2),
      instructions(root, scenario, job, 8),
    ]);
    return (long - short) / 6;
  };
  return (await perSecond("causes")) - (await perSecond("none"));
}

/** Parse the flags, run both trees on every scenario, print one result. */
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const flag = (name: string, fallback: string): string => {
    const i = argv.indexOf(name);
    return i >= 0 ? (argv[i + 1] ?? fallback) : fallback;
  };
  const rounds = Number(flag("--rounds", "5"));
  const counts = argv.includes("--counts");
  const scenarios = flag("--scenarios", SCENARIOS.join(",")).split(",") as Scenario[];
  const before = checkoutTree(flag("--before", "main"));
  const after = execFileSync("git", ["-C", TREE, "rev-parse", "--short", "HEAD"], {
    encoding: "utf8",
  }).trim();
  const figures: Figure[] = [];
  try {
    for (const scenario of scenarios) {
      for (const [label, root] of [
        [`before (${before.commit})`, before.root],
        [`after (${after} + work tree)`, TREE],
      ] as const) {
        const t = await timed(root, scenario, rounds);
        figures.push(
          {
            label: `${scenario}: cause path, ${label}`,
            value: t.path,
            unit: "ms CPU / simulated s (median)",
          },
          {
            label: `${scenario}: whole member loop, ${label}`,
            value: t.causes,
            unit: `ms CPU / s (${t.none.toFixed(1)} without cause rules)`,
          },
          { label: `${scenario}: KV writes, ${label}`, value: t.writes, unit: "per s (3 members)" },
          { label: `${scenario}: m0 summary + JSON, ${label}`, value: t.parts.summaryMs, unit: "ms a call" },
          { label: `${scenario}: merge of 2 peers, ${label}`, value: t.parts.mergeMs, unit: "ms a call" },
          {
            label: `${scenario}: m0 cause pass, ${label}`,
            value: t.parts.passMs,
            unit: `ms a call (${t.parts.failingPeers} peers' targets failing)`,
          },
        );
        // the onset is no steady state: a difference of two window lengths would not be per second
        if (counts && scenario !== "onset")
          figures.push({
            label: `${scenario}: cause path instructions, ${label}`,
            value: await counted(root, scenario),
            unit: "Ir / simulated s (cachegrind)",
          });
      }
    }
  } finally {
    rmSync(before.root, { recursive: true, force: true });
  }
  printResult({
    name: "cause",
    title:
      "the cluster's cause path per member group (3 members × 500 targets, one process), before and after",
    method: [
      "3 members × 500 off-chain targets, one poll outcome per target per simulated second (failing: HTTP 500 from second 10, polled every second as with maxBackoffMs = periodMs, the worst case; onset: the same, measured from second 8 to 16; healthy; moving: a tenth of the pairs +0.5 %/s, price_change firing), each member ticked and its cause summaries' pass run once a second, summaries through an in-memory KV watched by all three; member m0 judges the cause rules",
      `cause path = the members' CPU with the shipped rules − with the shipped rules less the cause rules, over 10 measured seconds after 20 warm-up seconds (onset: 8 after 8); ${rounds} interleaved rounds, medians; --counts: cachegrind instructions (node under valgrind --tool=cachegrind --cache-sim=no), 8 − 2 measured seconds, /6`,
    ],
    figures,
    checks: [],
    notes: [
      "times are the sum over the three members (divide by 3 for one member); the failing scenario polls every target every second, the most a failing target is polled (the default backoff polls it less and less)",
    ],
  });
}

await main();
