// Shared value checks for config fields: pairs, URLs, identifiers.

/** Pair symbols are letters only (`BTC/USD`); lower case is accepted and upper-cased like the server does. */
export const PAIR_PATTERN = /^[A-Za-z]+\/[A-Za-z]+$/;

/** Upper-case a pair id. */
export function normalisePair(pair: string): string {
  return pair.toUpperCase();
}

/** Identifiers (rule ids, sink names, vault ids): letters, digits, `_`, `-`, `.`. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Why `value` is not an absolute http(s) URL, or undefined when it is one. Never echoes the value. */
export function httpUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute http(s) URL";
  }
  return url.protocol === "http:" || url.protocol === "https:"
    ? undefined
    : "must be an absolute http(s) URL";
}

/** A label name as Prometheus and Alertmanager spell them. */
const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why a `groupBy` list is wrong (label names, or `["..."]` alone to turn grouping off), or undefined. */
export function groupByProblem(names: readonly string[]): string | undefined {
  if (names.includes("...")) return names.length === 1 ? undefined : '"..." must be alone (grouping off)';
  const bad = names.find((name) => !LABEL_NAME.test(name));
  if (bad !== undefined) return `"${bad}" is not a label name ([A-Za-z_][A-Za-z0-9_]*)`;
  return new Set(names).size === names.length ? undefined : "lists a label twice";
}
