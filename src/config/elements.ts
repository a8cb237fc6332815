// Validate a config array with zod, element by element, reporting every issue as `path[i].key: reason`.
import type { z } from "zod";
import { didYouMean, type ConfigProblem } from "./problems.js";
import { jsonPath } from "../json-path.js";

/** Turn zod issues into problems under `base`; an unknown-keys issue carries one `key: reason` line per key. */
function issueProblems(issues: readonly z.core.$ZodIssue[], base: string): ConfigProblem[] {
  return issues.flatMap((issue) => {
    const key = jsonPath(base, issue.path);
    if (issue.code !== "unrecognized_keys") return [{ key, reason: issue.message }];
    return issue.message.split("\n").map((line) => {
      const at = line.indexOf(": ");
      return { key: `${key}.${line.slice(0, at)}`, reason: line.slice(at + 2) };
    });
  });
}

/** Parse one value with `schema`, reporting its issues under `key`; undefined when invalid. */
export function parseAt<T>(
  schema: z.ZodType<T>,
  raw: unknown,
  key: string,
  problems: ConfigProblem[],
): T | undefined {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  problems.push(...issueProblems(result.error.issues, key));
  return undefined;
}

/** Elements of an array key, each parsed by `parse` (undefined = invalid, already reported), in index order. */
export function parseArray<T>(
  raw: unknown,
  path: string,
  problems: ConfigProblem[],
  parse: (item: unknown, key: string) => T | undefined,
): Array<T | undefined> {
  if (!Array.isArray(raw)) {
    problems.push({ key: path, reason: "must be an array (JSON when set from env or a flag)" });
    return [];
  }
  return raw.map((item: unknown, index) => parse(item, `${path}[${index}]`));
}

/** The element schema of each kind of a kinded array (rules, sinks). */
export type KindSchemas<K extends string, T> = { readonly [P in K]: { readonly schema: z.ZodType<T> } };

/** Parse an element whose schema is chosen by its `kind`; an unknown kind is reported and its keys left alone. */
export function parseKinded<K extends string, T>(
  kinds: KindSchemas<K, T>,
  item: unknown,
  key: string,
  problems: ConfigProblem[],
): T | undefined {
  if (typeof item !== "object" || item === null || Array.isArray(item)) {
    problems.push({ key, reason: "must be an object" });
    return undefined;
  }
  const kind: unknown = (item as Record<string, unknown>)["kind"];
  const known = Object.entries<{ readonly schema: z.ZodType<T> }>(kinds);
  const match = known.find(([name]) => name === kind);
  if (match !== undefined) return parseAt(match[1].schema, item, key, problems);
  const names = known.map(([name]) => name);
  const reason =
    kind === undefined
      ? "required"
      : `must be one of ${names.join(", ")}, got ${JSON.stringify(kind)}${didYouMean(kind, names)}`;
  problems.push({ key: `${key}.kind`, reason });
  return undefined;
}

/** Report elements whose `identity` repeats an earlier one's; returns the valid elements. */
export function reportDuplicates<T>(
  items: ReadonlyArray<T | undefined>,
  path: string,
  problems: ConfigProblem[],
  identity: (item: T) => string,
  suffix = "",
  reason: (id: string, firstKey: string) => string = (_id, firstKey) => `duplicate of ${firstKey}`,
): T[] {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    if (item === undefined) return;
    const id = identity(item);
    const first = seen.get(id);
    if (first === undefined) seen.set(id, index);
    else problems.push({ key: `${path}[${index}]${suffix}`, reason: reason(id, `${path}[${first}]`) });
  });
  return items.filter((item): item is T => item !== undefined);
}
