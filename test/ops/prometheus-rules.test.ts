// The recommended Prometheus alert rules (docs/prometheus) pass `promtool check rules` and their `promtool test rules` unit tests.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../src/config/package-root.js";
import { SKIP_WITHOUT_PROMTOOL, promtool } from "../integration/promtool.js";

const ROOT = packageRoot();
const RULES = join(ROOT, "docs", "prometheus", "pragma-monitor.rules.yml");
const RULE_TESTS = join(ROOT, "test", "ops", "prometheus");

describe.skipIf(SKIP_WITHOUT_PROMTOOL)("docs/prometheus/pragma-monitor.rules.yml", () => {
  it("passes promtool check rules", () => {
    const result = promtool(["check", "rules", RULES]);
    expect(result.output).toContain("SUCCESS");
    expect(result.status, result.output).toBe(0);
  });

  it("passes its promtool unit tests", () => {
    const result = promtool(["test", "rules", "pragma-monitor.rules.test.yml"], { cwd: RULE_TESTS });
    expect(result.status, result.output).toBe(0);
  });
});
