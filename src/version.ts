// The package version, read once from package.json (works from src/ under tsx and from dist/src/).
import { readFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Find the nearest package.json above this module and return its version. */
function readVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, "package.json");
    if (existsSync(candidate)) {
      const parsed = JSON.parse(readFileSync(candidate, "utf8")) as { name?: unknown; version?: unknown };
      if (parsed.name === "pragma-monitor" && typeof parsed.version === "string") return parsed.version;
    }
    dir = dirname(dir);
  }
  return "0.0.0";
}

/** pragma-monitor's version, e.g. "0.1.0". */
export const VERSION: string = readVersion();

/** User-Agent sent upstream. */
export const USER_AGENT = `pragma-monitor/${VERSION}`;
