#!/usr/bin/env node
// Command entry for `npx pragma-monitor` and `npm start`: in a source checkout, compiles src/ and the status page
// (tsc -b, web/ is a referenced project) when dist/ is missing or older than their sources, saying so, then runs
// dist/src/main.js in this same process.
// Plain JavaScript because it has to run before anything is compiled. An installed package (no tsconfig.build.json
// beside it) skips the check and runs the shipped dist/ directly.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync, utimesSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";

// `run`: the young generation does not grow until dist/src/heap-settings.js (main.js's first import) sets its bound;
// without this, the build check and the loading of dist/ would grow it past that bound first
if (process.argv[2] === "run") setFlagsFromString("--semi-space-growth-factor=1");

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const TSCONFIG = "tsconfig.build.json";
/**
 * Written by `tsc -b` whenever it emits (with `"errors": true` when it failed), and dated by markBuilt when it had
 * nothing to emit: the build's own clock.
 */
const BUILD_INFO = join("dist", "tsconfig.build.tsbuildinfo");

/** Files under an included directory that `tsc -b` reads (allowJs is off); bench/RESULTS.md, say, is not one. */
const COMPILED_FILE = /\.(?:[cm]?ts|tsx|json)$/;

/**
 * Newest modification time (ms) of a path and everything under it that the build reads: a directory counts too
 * (deleting a file changes it), and so does a file named outright (a tsconfig), but under a directory only the files
 * COMPILED_FILE matches.
 * @param {string} path
 * @returns {number}
 */
function newestMtimeMs(path) {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return 0;
  }
  let newestMs = stats.mtimeMs;
  if (stats.isDirectory())
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.isDirectory() || COMPILED_FILE.test(entry.name))
        newestMs = Math.max(newestMs, newestMtimeMs(join(path, entry.name)));
    }
  return newestMs;
}

/**
 * A JSON object file (tsconfig.build.json, tsc's build info) as a record whose fields the caller checks.
 * @param {string} path
 * @returns {Record<string, unknown>}
 */
function readJson(path) {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-return -- untyped JSON; callers check each field they read
  return JSON.parse(readFileSync(path, "utf8"));
}

/**
 * The inputs of a build config and of the projects it references (relative to the root): each config file and what
 * its `include` names. `tsc -b` builds a referenced project first and then touches the referencing one's build
 * info, so the root's build info dates every project's last build.
 * @param {string} root
 * @param {string} tsconfig
 * @returns {string[]}
 */
function buildInputs(root, tsconfig) {
  const config = readJson(join(root, tsconfig));
  const dir = dirname(tsconfig);
  const include = Array.isArray(config["include"])
    ? config["include"].map((path) => join(dir, String(path)))
    : [];
  const references = Array.isArray(config["references"]) ? config["references"] : [];
  const referenced = references.flatMap((/** @type {unknown} */ reference) => {
    const path =
      typeof reference === "object" && reference !== null && "path" in reference ? reference.path : "";
    if (typeof path !== "string" || path === "") return [];
    return buildInputs(root, join(dir, path.endsWith(".json") ? path : join(path, "tsconfig.json")));
  });
  return [tsconfig, ...include, ...referenced];
}

/**
 * Why dist/ must be rebuilt ("" when it is up to date): no build yet, a failed one, or an input newer than the last.
 * @param {string} root
 * @returns {string}
 */
function staleReason(root) {
  const builtAtMs = newestMtimeMs(join(root, BUILD_INFO));
  if (builtAtMs === 0) return "no build yet";
  if (readJson(join(root, BUILD_INFO))["errors"] === true) return "the last build failed";
  const inputs = ["tsconfig.json", ...buildInputs(root, TSCONFIG)];
  const changed = inputs.find((input) => newestMtimeMs(join(root, input)) > builtAtMs);
  return changed === undefined ? "" : `${changed} changed since the last build`;
}

/**
 * Date the build info no earlier than `startedAtMs`, when the build that just passed began: `tsc -b` leaves it alone
 * when it finds every output up to date (a directory changed by a file it does not read, say), and the check would
 * then send every later start to `tsc -b` again. An input changed while that build ran is newer still.
 * @param {string} root
 * @param {number} startedAtMs
 */
function markBuilt(root, startedAtMs) {
  const path = join(root, BUILD_INFO);
  if (newestMtimeMs(path) >= startedAtMs) return;
  const at = new Date(startedAtMs);
  utimesSync(path, at, at);
}

/**
 * Compile with `tsc -b` (incremental, the same command as `npm run build`); exits the process if it fails.
 * @param {string} root
 * @param {string} reason
 */
function build(root, reason) {
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  if (!existsSync(tsc)) {
    process.stderr.write(
      `pragma-monitor: dist/ needs a build (${reason}) but TypeScript is not installed: run \`npm ci\` first\n`,
    );
    process.exit(1);
  }
  process.stderr.write(
    `pragma-monitor: compiling src/ into dist/ (${reason}); this takes 10-40 s and is skipped while nothing changes\n`,
  );
  const startedAtMs = Date.now();
  const result = spawnSync(process.execPath, [tsc, "-b", TSCONFIG], { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    process.stderr.write("pragma-monitor: the build failed (errors above); not starting\n");
    process.exit(result.status ?? 1);
  }
  markBuilt(root, startedAtMs);
  process.stderr.write(`pragma-monitor: compiled in ${((Date.now() - startedAtMs) / 1000).toFixed(1)} s\n`);
}

if (existsSync(join(ROOT, TSCONFIG))) {
  const reason = staleReason(ROOT);
  if (reason !== "") build(ROOT, reason);
}
await import(pathToFileURL(join(ROOT, "dist", "src", "main.js")).href);
