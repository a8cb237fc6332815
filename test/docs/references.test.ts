// The repository's Markdown cites only what a reader of the repository can open: no design notes or spec files kept
// elsewhere, no orphaned section signs, and every relative link resolves.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../e2e/daemon.js";

/** Every Markdown file of the repository: README.md and those under docs/, bench/ and test/. */
function markdownFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir === "." ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory())
      return ["docs", "bench", "test"].includes(path.split("/")[0]!) ? markdownFiles(path) : [];
    return entry.name.endsWith(".md") && (dir !== "." || entry.name === "README.md") ? [path] : [];
  });
}
const MARKDOWN = markdownFiles(".");

/** Problems with the references in one Markdown text, as `line N: why` strings (pure, for the table below). */
function badReferences(text: string, exists: (path: string) => boolean): string[] {
  const problems: string[] = [];
  text.split("\n").forEach((line, index) => {
    const at = `line ${index + 1}`;
    const prose = line.replace(/\]\([^)]*\)/g, "]()"); // link targets are checked below
    for (const match of prose.matchAll(/\bDESIGN\b[^\s,;:)]*/g))
      if (!exists("DESIGN.md")) problems.push(`${at}: cites "${match[0]}", which is not in the repository`);
    for (const match of prose.matchAll(/(?<![\w/.-])spec\/[\w./-]+/g))
      if (!exists(match[0])) problems.push(`${at}: cites ${match[0]}, which is not in the repository`);
    if (/§\s*\d/.test(prose)) problems.push(`${at}: a section sign (§N) names no document a reader can open`);
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!.split("#")[0]!;
      if (target === "" || /^[a-z]+:/.test(target)) continue;
      if (!exists(target)) problems.push(`${at}: links to ${target}, which does not exist`);
    }
  });
  return problems;
}

describe("badReferences", () => {
  const files = new Set(["docs/websocket.md", "README.md"]);
  it.each<[string, string, string[]]>([
    [
      "a design section",
      "the contract (DESIGN §3)",
      [
        'line 1: cites "DESIGN", which is not in the repository',
        "line 1: a section sign (§N) names no document a reader can open",
      ],
    ],
    [
      "a spec file",
      "x\nthe six endpoints of `spec/pragma-api.md`",
      ["line 2: cites spec/pragma-api.md, which is not in the repository"],
    ],
    [
      "a bare section sign",
      "the exact §3 event",
      ["line 1: a section sign (§N) names no document a reader can open"],
    ],
    ["a broken link", "[ws](docs/nope.md#x)", ["line 1: links to docs/nope.md, which does not exist"]],
    [
      "links that resolve, anchors and URLs",
      "[a](docs/websocket.md#gap) [b](#alerts) [c](https://x.dev/spec/a.md)",
      [],
    ],
    ["the word spec alone", "bare object (spec); per the spec", []],
  ])("finds %s", (_name, text, problems) => {
    expect(badReferences(text, (path) => files.has(path))).toEqual(problems);
  });
});

describe("the repository's Markdown", () => {
  it.each(MARKDOWN)("%s cites only what is in the repository", (file) => {
    const text = readFileSync(join(ROOT, file), "utf8");
    expect(badReferences(text, (path) => existsSync(join(ROOT, dirname(file), path)))).toEqual([]);
  });

  it("covers the README and every page under docs/", () => {
    expect(MARKDOWN).toContain("README.md");
    expect(MARKDOWN.filter((file) => file.startsWith("docs/")).length).toBeGreaterThanOrEqual(5);
  });
});
