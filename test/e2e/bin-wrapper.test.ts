// bin/pragma-monitor.js (the `npx pragma-monitor` / `npm start` entry): builds only when dist/ is stale, and says so.
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "./daemon.js";

const COMPILING = /pragma-monitor: compiling src\/ into dist\/ \((.+)\)/;

// each case compiles (a tiny project, but tsc starts slowly on a busy machine): generous time per case
describe("bin/pragma-monitor.js in a source checkout", { timeout: 180_000 }, () => {
  // a project laid out like the repository, with a main.ts that compiles in a second instead of the daemon
  const project = mkdtempSync(join(tmpdir(), "pm-bin-"));
  const main = join(project, "src", "main.ts");
  beforeAll(() => {
    mkdirSync(join(project, "bin"));
    mkdirSync(join(project, "src"));
    copyFileSync(join(ROOT, "bin", "pragma-monitor.js"), join(project, "bin", "pragma-monitor.js"));
    for (const file of ["package.json", "tsconfig.json", "tsconfig.build.json"])
      copyFileSync(join(ROOT, file), join(project, file));
    // the repository's tsconfig.json includes test/ and config files that the fixture does not have
    writeFileSync(
      join(project, "tsconfig.build.json"),
      JSON.stringify({ extends: "./tsconfig.json", include: ["src"], compilerOptions: { noEmit: false } }),
    );
    symlinkSync(join(ROOT, "node_modules"), join(project, "node_modules"));
    writeFileSync(main, 'console.log("main", process.argv.slice(2).join(" "));\n');
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  const run = (...args: string[]) => {
    const result = spawnSync(process.execPath, [join(project, "bin", "pragma-monitor.js"), ...args], {
      cwd: tmpdir(),
      encoding: "utf8",
      timeout: 60_000,
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };

  it("compiles on the first run, saying why and how long it took, then runs main with the arguments", () => {
    const first = run("tail", "--json");
    expect(first.stderr).toMatch(COMPILING);
    expect(COMPILING.exec(first.stderr)?.[1]).toBe("no build yet");
    expect(first.stderr).toMatch(/pragma-monitor: compiled in \d+\.\d s/);
    expect(first).toMatchObject({ status: 0, stdout: "main tail --json\n" });
  });

  it("skips the build, silently, while nothing changed", () => {
    expect(run("run")).toEqual({ status: 0, stdout: "main run\n", stderr: "" });
  });

  // every edit below is newer than the build before it, as an edit after a build is
  it("rebuilds after a source changes, is added or is deleted", () => {
    writeFileSync(main, 'console.log("edited");\n');
    const edited = run();
    expect(COMPILING.exec(edited.stderr)?.[1]).toBe("src changed since the last build");
    expect(edited.stdout).toBe("edited\n");

    const extra = join(project, "src", "extra.ts");
    writeFileSync(extra, "export const extra = 1;\n");
    expect(run().stderr).toMatch(COMPILING);
    rmSync(extra);
    expect(run().stderr).toMatch(COMPILING);
    expect(run().stderr).toBe("");
  });

  // what `npm run bench` does to bench/RESULTS.md, under a directory the build includes
  it("ignores a file the build does not read, and rebuilds at most once for a directory it changed", () => {
    const notes = join(project, "src", "RESULTS.md");
    writeFileSync(notes, "first\n");
    const added = run();
    expect(COMPILING.exec(added.stderr)?.[1]).toBe("src changed since the last build");
    expect(added.status).toBe(0);
    // tsc -b found nothing to do and left its build info alone: the wrapper dated it, so no start checks again
    expect(run().stderr).toBe("");
    writeFileSync(notes, "rewritten\n");
    expect(run()).toEqual({ status: 0, stdout: "edited\n", stderr: "" });
    rmSync(notes);
    expect(run().stderr).toMatch(COMPILING);
    expect(run().stderr).toBe("");
  });

  it("does not start after a failed build, and retries the build until it passes", () => {
    writeFileSync(main, 'const count: number = "three";\nconsole.log(count);\n');
    const failed = run();
    expect(failed.status).not.toBe(0);
    expect(failed.stdout).toMatch(/error TS2322/);
    expect(failed.stderr).toMatch(/the build failed \(errors above\); not starting/);
    expect(COMPILING.exec(run().stderr)?.[1]).toBe("the last build failed");

    writeFileSync(main, 'console.log("fixed");\n');
    expect(run()).toMatchObject({ status: 0, stdout: "fixed\n" });
  });
});

describe(
  "bin/pragma-monitor.js with a referenced project (the status page, web/)",
  { timeout: 180_000 },
  () => {
    // the repository's layout: tsconfig.build.json references web/tsconfig.json, a composite browser project
    const project = mkdtempSync(join(tmpdir(), "pm-bin-web-"));
    const page = join(project, "web", "src", "page.ts");
    beforeAll(() => {
      mkdirSync(join(project, "bin"));
      mkdirSync(join(project, "src"));
      mkdirSync(join(project, "web", "src"), { recursive: true });
      copyFileSync(join(ROOT, "bin", "pragma-monitor.js"), join(project, "bin", "pragma-monitor.js"));
      for (const file of ["package.json", "tsconfig.json"])
        copyFileSync(join(ROOT, file), join(project, file));
      copyFileSync(join(ROOT, "web", "tsconfig.json"), join(project, "web", "tsconfig.json"));
      const build = JSON.parse(readFileSync(join(ROOT, "tsconfig.build.json"), "utf8")) as Record<
        string,
        unknown
      >;
      writeFileSync(join(project, "tsconfig.build.json"), JSON.stringify({ ...build, include: ["src"] }));
      symlinkSync(join(ROOT, "node_modules"), join(project, "node_modules"));
      writeFileSync(join(project, "src", "main.ts"), 'console.log("main");\n');
      writeFileSync(page, 'document.title = "one";\n');
    });
    afterAll(() => rmSync(project, { recursive: true, force: true }));

    const run = () =>
      spawnSync(process.execPath, [join(project, "bin", "pragma-monitor.js")], {
        cwd: tmpdir(),
        encoding: "utf8",
        timeout: 60_000,
      });

    it("builds the page with the daemon, and again (only) when the page's source changes", () => {
      expect(COMPILING.exec(run().stderr)?.[1]).toBe("no build yet");
      expect(readFileSync(join(project, "dist", "web", "page.js"), "utf8")).toContain('"one"');
      expect(run().stderr).toBe("");
      writeFileSync(page, 'document.title = "two";\n');
      const rebuilt = run();
      expect(COMPILING.exec(rebuilt.stderr)?.[1]).toBe("web/src changed since the last build");
      expect(rebuilt.stdout).toBe("main\n");
      expect(readFileSync(join(project, "dist", "web", "page.js"), "utf8")).toContain('"two"');
      expect(run().stderr).toBe("");
    });
  },
);

describe("an installed package (no tsconfig.build.json beside bin/)", () => {
  const installed = mkdtempSync(join(tmpdir(), "pm-installed-"));
  afterAll(() => rmSync(installed, { recursive: true, force: true }));

  it("runs the shipped dist/ without looking for TypeScript", () => {
    mkdirSync(join(installed, "bin"));
    mkdirSync(join(installed, "dist", "src"), { recursive: true });
    copyFileSync(join(ROOT, "bin", "pragma-monitor.js"), join(installed, "bin", "pragma-monitor.js"));
    writeFileSync(join(installed, "package.json"), JSON.stringify({ type: "module" }));
    writeFileSync(join(installed, "dist", "src", "main.js"), 'console.log("shipped");\n');
    const result = spawnSync(process.execPath, [join(installed, "bin", "pragma-monitor.js")], {
      encoding: "utf8",
    });
    expect(result).toMatchObject({ status: 0, stdout: "shipped\n", stderr: "" });
  });
});

describe("package.json", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    bin: Record<string, string>;
    files: string[];
    scripts: Record<string, string>;
  };

  it("points the bin at the committed wrapper (a bin under dist/ does not exist after `npm ci`)", () => {
    expect(pkg.bin).toEqual({ "pragma-monitor": "bin/pragma-monitor.js" });
    expect(pkg.files).toContain("bin");
    // the daemon serves the status page from these two (src/http/status-page.ts)
    expect(pkg.files).toEqual(expect.arrayContaining(["dist/src", "dist/web", "web/static"]));
    expect(readFileSync(join(ROOT, pkg.bin["pragma-monitor"]!), "utf8")).toMatch(/^#!\/usr\/bin\/env node\n/);
  });

  it("builds with tsc -b, whose build info the wrapper reads", () => {
    expect(pkg.scripts["build"]).toBe("tsc -b tsconfig.build.json");
  });
});
