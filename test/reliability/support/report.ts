// Suite reports: print each suite's counts and hand them to the global teardown that writes bench/RELIABILITY.md.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";
import { MODE, SEED, type ReliabilityMode } from "./mode.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** Directory where each suite drops its JSON report for the global teardown. */
    reliabilityResultsDir: string;
  }
}

/** What one suite measured. `lost` must be 0 for the suite to pass. */
export interface SuiteReport {
  readonly suite: string;
  readonly title: string;
  readonly mode: ReliabilityMode;
  readonly seed: number;
  readonly durationMs: number;
  readonly counts: Readonly<Record<string, number>>;
  readonly notes: readonly string[];
}

/** The suites bench/RELIABILITY.md expects, in display order. */
export const SUITES = [
  "upstream-faults",
  "ws-abuse",
  "origin-host",
  "http-flood",
  "sink-faults",
  "crash-consistency",
  "cluster-kills",
] as const;

/** Print `counts` and store the report for the teardown. */
export function reportSuite(
  suite: (typeof SUITES)[number],
  title: string,
  startedAtMs: number,
  counts: Readonly<Record<string, number>>,
  notes: readonly string[] = [],
): SuiteReport {
  const report: SuiteReport = {
    suite,
    title,
    mode: MODE,
    seed: SEED,
    durationMs: Date.now() - startedAtMs,
    counts,
    notes,
  };
  const width = Math.max(...Object.keys(counts).map((key) => key.length));
  const lines = Object.entries(counts).map(([key, value]) => `  ${key.padEnd(width)}  ${value}`);
  console.log(
    `[reliability] ${suite} (${MODE} mode, seed ${SEED}, ${(report.durationMs / 1000).toFixed(1)} s)\n` +
      `${lines.join("\n")}${notes.length > 0 ? `\n  notes: ${notes.join("; ")}` : ""}`,
  );
  writeFileSync(join(inject("reliabilityResultsDir"), `${suite}.json`), JSON.stringify(report));
  return report;
}
