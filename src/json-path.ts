// Where a zod issue points, written the way our messages name a field (`faults[2].fault.factor`), and which issue to report.
import type { z } from "zod";

/** `base` + ["alerts", 0, "status"] → `base.alerts[0].status`; an empty `base` starts with the first key. */
export function jsonPath(base: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((at, part) => {
    if (typeof part === "number") return `${at}[${part}]`;
    return at === "" ? String(part) : `${at}.${String(part)}`;
  }, base);
}

/** A field and what is wrong with it. */
export interface JsonProblem {
  readonly path: string;
  readonly reason: string;
}

/**
 * The one problem to report of a failed parse: an unknown field first (a typo explains the errors after it),
 * else the first issue. `root` names the document itself when the issue has no path.
 */
export function firstProblem(error: z.ZodError, base: string, root = base): JsonProblem {
  const unknown = error.issues.find((issue) => issue.code === "unrecognized_keys");
  if (unknown !== undefined)
    return { path: jsonPath(base, [...unknown.path, unknown.keys[0] ?? ""]), reason: "unknown field" };
  const issue = error.issues[0];
  const path = issue === undefined ? "" : jsonPath(base, issue.path);
  return { path: path === "" ? root : path, reason: issue?.message ?? "invalid" };
}
