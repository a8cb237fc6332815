// The shape every bench returns to the runner: figures, side-by-side ratios and target verdicts.

/** One measured figure, e.g. "daemon CPU" = 412 "ms CPU / 10 s". */
export interface Figure {
  readonly label: string;
  readonly value: number;
  readonly unit: string;
}

/** One target of DESIGN §7 checked against a measured value. */
export interface TargetCheck {
  readonly what: string;
  /** Human form of the target, e.g. "≤ 1.3×". */
  readonly target: string;
  readonly value: number;
  readonly unit: string;
  readonly pass: boolean;
}

/** What a bench reports. */
export interface BenchResult {
  readonly name: string;
  readonly title: string;
  /** How it was measured (one line each): setup, rounds, what the baseline is. */
  readonly method: readonly string[];
  readonly figures: readonly Figure[];
  readonly checks: readonly TargetCheck[];
  readonly notes?: readonly string[];
}

/** A check with `value ≤ limit`. */
export function atMost(what: string, value: number, limit: number, unit: string): TargetCheck {
  return { what, target: `≤ ${limit}${unit}`, value, unit, pass: value <= limit };
}

/** A check with `value ≥ limit`. */
export function atLeast(what: string, value: number, limit: number, unit: string): TargetCheck {
  return { what, target: `≥ ${limit.toLocaleString("en-US")}${unit}`, value, unit, pass: value >= limit };
}

/** Format a figure for humans: integers with separators, small numbers with 2–3 significant decimals. */
export function formatValue(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString("en-US");
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** Print a result to stdout in the same layout RESULTS.md uses. */
export function printResult(result: BenchResult): void {
  const lines = [`== ${result.name}: ${result.title}`];
  for (const m of result.method) lines.push(`   ${m}`);
  for (const f of result.figures) lines.push(`   ${f.label.padEnd(44)} ${formatValue(f.value)} ${f.unit}`);
  for (const c of result.checks)
    lines.push(
      `   [${c.pass ? "PASS" : "MISS"}] ${c.what}: ${formatValue(c.value)}${c.unit} (target ${c.target})`,
    );
  for (const n of result.notes ?? []) lines.push(`   note: ${n}`);
  process.stdout.write(`${lines.join("\n")}\n`);
}
