// The Dockerfile without a Docker engine: replay both stages' COPY lines into temp dirs, build, run with prod deps only.
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ROOT, killAllDaemons, spawnDaemon } from "./daemon.js";

/** One Dockerfile instruction with its continuation lines joined. */
interface Instruction {
  readonly op: string;
  readonly args: string;
}

/** Instructions per stage (split at FROM), comments dropped. */
function parseDockerfile(text: string): Instruction[][] {
  const stages: Instruction[][] = [];
  const joined = text.replace(/\\\n/g, " ");
  for (const line of joined.split("\n")) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const [op = "", ...rest] = trimmed.split(/\s+/);
    const instruction = { op: op.toUpperCase(), args: rest.join(" ") };
    if (instruction.op === "FROM") stages.push([]);
    stages.at(-1)?.push(instruction);
  }
  return stages;
}

const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
const [buildStage = [], runtimeStage = []] = parseDockerfile(dockerfile);
const work = mkdtempSync(join(tmpdir(), "pm-docker-"));
const buildDir = join(work, "build"); // the build stage's /app
const appDir = join(work, "app"); // the runtime stage's /app

/** `COPY [--from=x] src... dest` → sources, destination, stage. */
function copies(stage: readonly Instruction[]): { from: string | null; sources: string[]; dest: string }[] {
  return stage
    .filter((i) => i.op === "COPY")
    .map((i) => {
      const words = i.args.split(/\s+/);
      const fromFlag = words.find((w) => w.startsWith("--from="));
      const paths = words.filter((w) => !w.startsWith("--"));
      return {
        from: fromFlag?.slice("--from=".length) ?? null,
        sources: paths.slice(0, -1),
        dest: paths.at(-1) ?? "",
      };
    });
}

/** Copy `source` to `dest` the way COPY does (a directory's contents go into dest; a file into dest/ if it ends in /). */
function copyLike(source: string, destDir: string, dest: string, name: string): void {
  const target = dest.endsWith("/") ? join(destDir, dest, name) : join(destDir, dest);
  cpSync(source, target, { recursive: true });
}

/** Production packages (`npm ls --omit=dev`), copied (not linked: a link would resolve dev deps from the repo). */
function copyProductionModules(target: string): number {
  const listed = spawnSync("npm", ["ls", "--omit=dev", "--all", "--parseable"], {
    cwd: ROOT,
    encoding: "utf8",
  });
  const tops = new Set<string>();
  for (const line of listed.stdout.split("\n")) {
    const rel = relative(ROOT, line.trim()).split("/");
    if (rel[0] !== "node_modules" || rel.length < 2) continue;
    tops.add((rel[1] ?? "").startsWith("@") ? rel.slice(0, 3).join("/") : rel.slice(0, 2).join("/"));
  }
  for (const top of tops)
    cpSync(join(ROOT, top), join(target, relative("node_modules", top)), { recursive: true });
  return tops.size;
}

afterEach(() => killAllDaemons());
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("Dockerfile (emulated: no docker engine here)", () => {
  it("runs node under tini from Debian's path, as a non-root user, with a state volume", () => {
    expect(runtimeStage.find((i) => i.op === "RUN")?.args).toMatch(/apt-get install .*\btini\b/);
    expect(runtimeStage.find((i) => i.op === "ENTRYPOINT")?.args).toBe(
      '["/usr/bin/tini", "--", "node", "--heap-growing-percent=25", "dist/src/main.js"]',
    );
    expect(runtimeStage.find((i) => i.op === "USER")?.args).toBe("node");
    expect(runtimeStage.find((i) => i.op === "VOLUME")?.args).toContain("/var/lib/pragma-monitor");
    const env = runtimeStage
      .filter((i) => i.op === "ENV")
      .map((i) => i.args)
      .join(" ");
    const drainMs = Number(/PM_SHUTDOWN_DRAIN_TIMEOUT_MS=(\d+)/.exec(env)?.[1]);
    expect(drainMs + 1_000, "drain + 1 s must end before docker stop's 10 s SIGKILL").toBeLessThan(10_000);
  });

  it("builds from exactly the files the build stage copies, and runs with production dependencies only", async () => {
    // build stage: COPY into /app, `npm ci` (stood in for by the repo's node_modules), `npm run build`
    mkdirSync(buildDir, { recursive: true });
    for (const { sources, dest } of copies(buildStage))
      for (const source of sources) copyLike(join(ROOT, source), buildDir, dest, source);
    symlinkSync(join(ROOT, "node_modules"), join(buildDir, "node_modules"));
    const scripts = (
      JSON.parse(readFileSync(join(buildDir, "package.json"), "utf8")) as { scripts: { build: string } }
    ).scripts;
    expect(scripts.build).toBe("tsc -b tsconfig.build.json");
    expect(buildStage.some((i) => i.op === "RUN" && i.args.includes("npm run build"))).toBe(true);
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const build = spawnSync(process.execPath, [tsc, "-b", "tsconfig.build.json"], {
      cwd: buildDir,
      encoding: "utf8",
    });
    expect(build.status, build.stdout + build.stderr).toBe(0);

    // runtime stage: COPY --from=build and from the context; node_modules after `npm prune --omit=dev`
    mkdirSync(appDir, { recursive: true });
    for (const { from, sources, dest } of copies(runtimeStage))
      for (const source of sources) {
        if (from === null) copyLike(join(ROOT, source), appDir, dest, source);
        else if (source === "/app/node_modules")
          expect(copyProductionModules(join(appDir, dest))).toBeGreaterThan(5);
        else copyLike(join(buildDir, relative("/app", source)), appDir, dest, source);
      }
    const prettyImport = spawnSync(
      process.execPath,
      ["-e", "import('pino-pretty').then(() => process.exit(0))"],
      {
        cwd: appDir,
      },
    );
    expect(prettyImport.status, "pino-pretty (log.pretty) resolves from production deps").toBe(0);

    // the image's ENV, except that the test binds loopback and keeps state in its temp dir
    const env = {
      NODE_ENV: "production",
      PM_STATE_DIR: join(work, "state"),
      PM_SERVER_HOST: "127.0.0.1",
      PM_SERVER_PORT: "0",
    };
    const mainJs = join(appDir, "dist", "src", "main.js");
    const check = spawnDaemon(["check-config"], { cwd: appDir, env, mainJs });
    expect(await check.waitExit(10_000)).toEqual({ code: 0, signal: null });

    const daemon = spawnDaemon(["run"], { cwd: appDir, env, mainJs });
    const started = await daemon.waitLog("pragma-monitor started", 15_000);
    const healthcheck = runtimeStage.find((i) => i.op === "HEALTHCHECK")?.args ?? "";
    const command = JSON.parse(healthcheck.slice(healthcheck.indexOf("CMD") + 3).trim()) as string[];
    expect(command[0]).toBe("node");
    const probe = spawnSync(process.execPath, command.slice(1), {
      env: { ...process.env, PM_SERVER_PORT: String(started.port) },
    });
    expect(probe.status, "HEALTHCHECK command against the running daemon").toBe(0);
    // the image serves the status page: its HTML and the modules it loads were copied
    const base = `http://127.0.0.1:${String(started.port)}`;
    const html = await fetch(`${base}/`);
    expect(html.status, "GET / from the image").toBe(200);
    expect(html.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await html.text()).toContain("/assets/js/main.js");
    const script = await fetch(`${base}/assets/js/main.js`);
    expect(script.status, "the page's entry module from the image").toBe(200);
    await script.arrayBuffer();
    daemon.signal("SIGTERM");
    expect(await daemon.waitExit(10_000)).toEqual({ code: 0, signal: null });
  }, 240_000);
});
