// jsonPath names a field the way our messages do; firstProblem reports an unknown field before anything else.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { firstProblem, jsonPath } from "../src/json-path.js";

describe("jsonPath", () => {
  it.each<[string, PropertyKey[], string]>([
    ["", [], ""],
    ["", ["faults", 2, "fault", "factor"], "faults[2].fault.factor"],
    ["alert state", ["alerts", 0, "status"], "alert state.alerts[0].status"],
    ["body.fault", ["pair"], "body.fault.pair"],
    ["rules", [1], "rules[1]"],
  ])("%j + %j → %j", (base, path, expected) => {
    expect(jsonPath(base, path)).toBe(expected);
  });
});

describe("firstProblem", () => {
  const schema = z.strictObject({ a: z.number({ error: "must be a number" }), b: z.string().optional() });
  const problemOf = (value: unknown) => {
    const parsed = schema.safeParse(value);
    if (parsed.success) throw new Error("expected a failure");
    return firstProblem(parsed.error, "doc", "(root)");
  };

  it("reports an unknown field first, even after a bad one", () => {
    expect(problemOf({ a: "x", typo: 1 })).toEqual({ path: "doc.typo", reason: "unknown field" });
  });

  it("reports the first issue at its path", () => {
    expect(problemOf({ a: "x" })).toEqual({ path: "doc.a", reason: "must be a number" });
  });

  it("names the document itself with the root label", () => {
    const parsed = z.number().safeParse("x");
    expect(parsed.success ? null : firstProblem(parsed.error, "", "(root)").path).toBe("(root)");
  });
});
