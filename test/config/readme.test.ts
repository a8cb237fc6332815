// The README's table of config keys is generated from the schema; this fails when it drifts (PM_UPDATE_DOCS=1 rewrites it).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { format, resolveConfig } from "prettier";
import { expect, it } from "vitest";
import { schemaKeysTableMarkdown } from "../../src/config/docs.js";
import { packageRoot } from "../../src/config/package-root.js";

const README = join(packageRoot(), "README.md");
const START = /<!-- config-keys:start[^>]*-->\n/;
const END = "<!-- config-keys:end -->";

it("README lists every config key as the schema defines it", async () => {
  const current = readFileSync(README, "utf8");
  const start = START.exec(current);
  const end = current.indexOf(END);
  expect(start, "README must keep the config-keys markers").not.toBeNull();
  expect(end).toBeGreaterThan(start!.index);
  const head = current.slice(0, start!.index + start![0].length);
  const filled = `${head}\n${schemaKeysTableMarkdown()}\n\n${current.slice(end)}`;
  const expected = await format(filled, { ...((await resolveConfig(README)) ?? {}), filepath: README });
  if (process.env["PM_UPDATE_DOCS"] === "1") writeFileSync(README, expected);
  expect(readFileSync(README, "utf8")).toBe(expected);
});
