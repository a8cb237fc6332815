// Debian's headless Chromium driven by playwright-core (never a downloaded browser), with flags for a closed network.
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/** The browser binary: Debian's package (`.ci/run` installs it), or PM_CHROMIUM. */
export const CHROMIUM = process.env["PM_CHROMIUM"] ?? "/usr/bin/chromium";

/** Browser tests skip on a developer machine without Chromium; under CI they run (and fail if it is missing). */
export const SKIP_BROWSER = process.env["CI"] === undefined && !existsSync(CHROMIUM);

/** Headless, as root, with no background connections (this machine's network is closed: they would only fail). */
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Launch Chromium on a fresh profile directory (returned, for the caller to remove). */
export async function launchChromium(
  options: {
    readonly viewport?: { width: number; height: number };
    readonly colorScheme?: "light" | "dark";
  } = {},
): Promise<{ readonly browser: BrowserContext; readonly profile: string }> {
  const profile = mkdtempSync(join(tmpdir(), "pm-chromium-"));
  // a fresh profile per run (playwright takes it as the persistent context's user-data-dir)
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    ...options,
    args: CHROMIUM_ARGS,
    // it starts in about a second; 8 s ran out once in CI while the other e2e files shared the 2 cores
    timeout: 30_000,
  });
  return { browser, profile };
}
