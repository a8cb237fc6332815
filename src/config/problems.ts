// Config problems as `key: reason` pairs, and the PM_ERR_CONFIG error that lists every one of them.
import { PmError } from "../domain/errors.js";

/** One thing wrong with the configuration: the dotted key (with `[i]` for array elements) and why. */
export interface ConfigProblem {
  readonly key: string;
  readonly reason: string;
}

/** Render problems one per line as `key: reason`, dropping exact duplicates. */
export function formatProblems(problems: readonly ConfigProblem[]): string {
  return [...new Set(problems.map((p) => `${p.key}: ${p.reason}`))].join("\n");
}

/** The error loadConfig throws: message lists every problem; details.key names the first key. */
export function configError(problems: readonly ConfigProblem[], cause?: unknown): PmError {
  const first = problems[0];
  const details = first === undefined ? {} : { key: first.key };
  const message = `invalid configuration:\n${formatProblems(problems)}`;
  return new PmError("PM_ERR_CONFIG", message, cause === undefined ? { details } : { details, cause });
}

/** Problems carried by a PM_ERR_CONFIG error, recovered from its message (for the CLI). */
export function problemsOf(error: PmError): ConfigProblem[] {
  const lines = error.message.split("\n").slice(1);
  return lines.map((line) => {
    const at = line.indexOf(": ");
    return at < 0 ? { key: "", reason: line } : { key: line.slice(0, at), reason: line.slice(at + 2) };
  });
}

const UNDECLARED = /^configuration param '(.+)' not declared in the schema$/;
const MISSING = /^configuration param '(.+)' missing from config/;

/** Turn convict's validate() message (one problem per line) into problems. */
export function parseConvictMessage(message: string): ConfigProblem[] {
  return message
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const undeclared = UNDECLARED.exec(line);
      if (undeclared?.[1] !== undefined) return { key: undeclared[1], reason: "unknown key" };
      const missing = MISSING.exec(line);
      if (missing?.[1] !== undefined)
        return { key: missing[1], reason: "missing (its section was replaced)" };
      const at = line.indexOf(": ");
      return at < 0 ? { key: "", reason: line } : { key: line.slice(0, at), reason: line.slice(at + 2) };
    });
}

/** Why an unknown key is refused, with the closest known key as a suggestion. */
export function unknownKey(name: string, known: readonly string[]): string {
  return `unknown key${didYouMean(name, known)}`;
}

/** ` (did you mean X?)` with the closest candidate, or "" when none is close (or the value is not a string). */
export function didYouMean(value: unknown, candidates: readonly string[]): string {
  const guess = typeof value === "string" ? closest(value, candidates) : undefined;
  return guess === undefined ? "" : ` (did you mean ${guess}?)`;
}

/** Closest candidate within edit distance 2, to suggest on an unknown key ("treshold" → "threshold"). */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
