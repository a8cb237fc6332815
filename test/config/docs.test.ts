// docs/configuration.md is generated from the schema; this fails when it drifts (PM_UPDATE_DOCS=1 rewrites it).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { format, resolveConfig } from "prettier";
import { expect, it } from "vitest";
import { configTableMarkdown, configurationMarkdown } from "../../src/config/docs.js";
import { packageRoot } from "../../src/config/package-root.js";
import { configSchema } from "../../src/config/schema.js";
import { leaves } from "../../src/config/schema-node.js";

const DOC = join(packageRoot(), "docs", "configuration.md");

it("docs/configuration.md is up to date with the schema", async () => {
  // Compare after prettier, which `npm run format` applies to the file too.
  const options = (await resolveConfig(DOC)) ?? {};
  const expected = await format(configurationMarkdown(), { ...options, filepath: DOC });
  if (process.env["PM_UPDATE_DOCS"] === "1") writeFileSync(DOC, expected);
  expect(readFileSync(DOC, "utf8")).toBe(expected);
});

it("documents every key, env variable and element key", () => {
  const table = configTableMarkdown();
  for (const [key, leaf] of leaves(configSchema)) {
    expect(table).toContain(`| \`${key}\` | \`${leaf.env}\` |`);
    expect(leaf.env).toMatch(/^PM_[A-Z0-9_]+$/);
    expect(leaf.doc.length).toBeGreaterThan(5);
  }
  for (const key of [
    "`windowMs`",
    "`clearThreshold`",
    "`repeatIntervalMs`",
    "`routingKey`",
    "`entryType`",
    "`periodMs`",
  ]) {
    expect(table).toContain(key);
  }
  expect(table).toContain("### `price_level`");
  expect(table).toContain("https://events.pagerduty.com/v2/enqueue");
});

it("gives every schema key a distinct env variable", () => {
  const envs = leaves(configSchema).map(([, leaf]) => leaf.env);
  expect(new Set(envs).size).toBe(envs.length);
});
