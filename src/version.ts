// The package version, read once from package.json (works from src/ under tsx and from dist/src/).
import { readFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

interface PackageFacts {
  readonly version: string;
  /** Where a receiver's operator can read about us: package.json `homepage`, else its repository URL. */
  readonly homepage: string | undefined;
}

/** Find the nearest package.json above this module and return its version and homepage. */
function readPackage(): PackageFacts {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, "package.json");
    if (existsSync(candidate)) {
      const parsed = JSON.parse(readFileSync(candidate, "utf8")) as {
        name?: unknown;
        version?: unknown;
        homepage?: unknown;
        repository?: unknown;
      };
      if (parsed.name === "pragma-monitor" && typeof parsed.version === "string")
        return { version: parsed.version, homepage: homepageOf(parsed.homepage, parsed.repository) };
    }
    dir = dirname(dir);
  }
  return { version: "0.0.0", homepage: undefined };
}

function homepageOf(homepage: unknown, repository: unknown): string | undefined {
  if (typeof homepage === "string" && /^https?:\/\//.test(homepage)) return homepage;
  const url =
    typeof repository === "object" && repository !== null && "url" in repository
      ? repository.url
      : repository;
  if (typeof url !== "string") return undefined;
  const cleaned = url.replace(/^git\+/, "").replace(/\.git$/, "");
  return /^https?:\/\//.test(cleaned) ? cleaned : undefined;
}

const PACKAGE = readPackage();

/** pragma-monitor's version, e.g. "0.1.0". */
export const VERSION: string = PACKAGE.version;

/** The User-Agent of a pragma-monitor at `version` documented at `homepage`: `pragma-monitor/0.1.0 (+https://…)`. */
export function userAgentOf(version: string, homepage: string | undefined): string {
  return homepage === undefined ? `pragma-monitor/${version}` : `pragma-monitor/${version} (+${homepage})`;
}

/** User-Agent sent upstream, on every sink request and on heartbeat pings. */
export const USER_AGENT = userAgentOf(VERSION, PACKAGE.homepage);
