// docs/operations.md stays true: it documents every metric the daemon registers and every recommended alert rule.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Registry } from "prom-client";
import { expect, it } from "vitest";
import { packageRoot } from "../../src/config/package-root.js";
import { createMetrics } from "../../src/metrics.js";

const ROOT = packageRoot();
const GUIDE = readFileSync(join(ROOT, "docs", "operations.md"), "utf8");

it("documents every pragma_monitor_* metric the daemon registers", async () => {
  const registry = new Registry();
  createMetrics(registry, { collectProcess: false });
  const names = (await registry.getMetricsAsJSON()).map((metric) => metric.name);
  expect(names.length).toBeGreaterThan(20);
  const missing = names.filter((name) => !GUIDE.includes(`\`${name}\``));
  expect(missing, "metrics missing from docs/operations.md").toEqual([]);
});

it("documents every alert of the recommended rules file, and the README links the guide", () => {
  const rules = readFileSync(join(ROOT, "docs", "prometheus", "pragma-monitor.rules.yml"), "utf8");
  const alerts = [...rules.matchAll(/^\s*- alert: (\w+)$/gm)].map((match) => match[1]!);
  expect(alerts.length).toBeGreaterThanOrEqual(9);
  const missing = alerts.filter((alert) => !GUIDE.includes(`\`${alert}\``));
  expect(missing, "alerts missing from docs/operations.md").toEqual([]);
  expect(readFileSync(join(ROOT, "README.md"), "utf8")).toContain("(docs/operations.md)");
});
