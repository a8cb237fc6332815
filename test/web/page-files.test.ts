// The page as built from this checkout: within its size budget, every module it imports served, and nothing in the
// HTML that the Content-Security-Policy would block (inline scripts, inline styles, event handler attributes).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gzippedBytes, loadStatusPage, type StatusPage } from "../../src/http/status-page.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The whole page (HTML, CSS, icon, every module), gzipped as served: issue 20 §3 allows 150 KB. */
const BUDGET_BYTES = 150 * 1024;

describe("the status page built from web/", { timeout: 60_000 }, () => {
  const out = mkdtempSync(join(tmpdir(), "pm-web-"));
  let page: StatusPage;
  beforeAll(() => {
    // the same compiler and settings as `npm run build`, into a temporary folder (dist/ may be stale or absent);
    // --noCheck emits the same files at half the time (isolatedModules: emit never depends on types), and
    // `npm run check` type-checks web/ before npm test in CI
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const build = spawnSync(
      process.execPath,
      [
        tsc,
        "-p",
        join(ROOT, "web", "tsconfig.json"),
        "--outDir",
        out,
        "--declarationDir",
        join(out, "types"),
        "--tsBuildInfoFile",
        join(out, "build.tsbuildinfo"),
        "--noCheck",
      ],
      { encoding: "utf8" },
    );
    expect(build.status, build.stdout + build.stderr).toBe(0);
    page = loadStatusPage({ staticDir: join(ROOT, "web", "static"), scriptDir: out });
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it(`is at most ${BUDGET_BYTES / 1024} KB gzipped in total`, () => {
    expect(page.unavailable).toBeNull();
    const total = gzippedBytes(page);
    expect(total).toBeGreaterThan(5_000);
    expect(total).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it("serves every module the page imports, and the files the HTML names", () => {
    const wanted = new Set(["/assets/js/main.js", "/assets/style.css", "/assets/favicon.svg"]);
    for (const [path, file] of page.files) {
      if (!path.endsWith(".js")) continue;
      // every static import and re-export of the module (tsc keeps them as written, one statement each)
      const statements =
        /^\s*(?:import\s*["']([^"']+)["']|(?:import|export)\b[^'";]*?\bfrom\s*["']([^"']+)["'])/gm;
      for (const [, bare, named] of file.body.toString("utf8").matchAll(statements)) {
        const specifier = bare ?? named ?? "";
        expect(specifier, `${path} imports only its own modules, by relative path`).toMatch(
          /^\.\/[\w-]+\.js$/,
        );
        wanted.add(`/assets/js/${specifier.slice(2)}`);
      }
    }
    for (const path of wanted) expect(page.files.has(path), path).toBe(true);
    const html = readFileSync(join(ROOT, "web", "static", "index.html"), "utf8");
    expect(html).toContain('src="/assets/js/main.js"');
    expect(html).toContain('href="/assets/style.css"');
  });

  it("has nothing inline for the policy to block", () => {
    const html = readFileSync(join(ROOT, "web", "static", "index.html"), "utf8");
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBe(1);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\bsrc="\/assets\//);
      expect(body?.trim()).toBe("");
    }
    expect(html).not.toMatch(/<style\b/);
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).not.toMatch(/\son[a-z]+=/);
    expect(html).not.toMatch(/javascript:/);
    // the scripts never write HTML or inline styles either
    for (const [path, file] of page.files)
      if (path.endsWith(".js"))
        expect(file.body.toString("utf8"), path).not.toMatch(
          /innerHTML|outerHTML|insertAdjacentHTML|setAttribute\("style"|\beval\(/,
        );
  });
});
