// Locate the package root (the directory of pragma-monitor's package.json) from this module, in src/ or dist/src/.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Directory holding pragma-monitor's package.json, found by walking up from this module. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, "package.json");
    if (existsSync(candidate)) {
      const parsed = JSON.parse(readFileSync(candidate, "utf8")) as { name?: unknown };
      if (parsed.name === "pragma-monitor") return dir;
    }
    dir = dirname(dir);
  }
  throw new Error("pragma-monitor package.json not found above " + fileURLToPath(import.meta.url));
}

/** Path of the bundled config/default.json (the simulator demo). */
export function defaultConfigPath(): string {
  return join(packageRoot(), "config", "default.json");
}
