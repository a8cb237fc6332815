// Build a validated AppConfig for a bench the way the daemon does (loadConfig over config/default.json), from a JSON object.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/load.js";
import type { AppConfig } from "../../src/config/types.js";

/** Off-chain monitor entries for `count` distinct targets spread over `pairs` (entry type × interval × aggregation). */
export function offchainMonitors(
  pairs: readonly string[],
  count: number,
  periodMs: number,
): Record<string, unknown>[] {
  const intervals = ["100ms", "1s", "5s", "10s", "1min", "5min", "15min", "1h", "2h", "1d", "1w"];
  const aggregations = ["median", "twap"];
  const out: Record<string, unknown>[] = [];
  for (let i = 0; out.length < count; i++) {
    const pair = pairs[i % pairs.length]!;
    const variant = Math.floor(i / pairs.length);
    // variant 0 keeps the config defaults (what a user writes); later variants make more targets per pair
    out.push(
      variant === 0
        ? { pair, periodMs }
        : {
            pair,
            interval: intervals[variant % intervals.length],
            aggregation: aggregations[Math.floor(variant / intervals.length) % aggregations.length],
            periodMs,
          },
    );
  }
  return out;
}

/** A fresh temporary directory (state dirs of in-process daemons). */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `pm-bench-${prefix}-`));
}

/**
 * Load `user` layered over config/default.json (so `rules` default to the shipped rule set), with
 * state in a temp dir; `monitors` arrays not given are emptied so only what the bench asks for runs.
 */
export function benchConfig(user: Record<string, unknown>): AppConfig {
  const file = join(tempDir("config"), "config.json");
  writeFileSync(file, JSON.stringify(benchConfigContent(user)));
  return loadConfig({ env: {}, configFile: file }).config;
}

/** The config file content of a bench: `user`, unlisted monitor arrays emptied, state in a temp dir, log level warn. */
export function benchConfigContent(user: Record<string, unknown>): Record<string, unknown> {
  const monitors = (user["monitors"] ?? {}) as Record<string, unknown>;
  return {
    ...user,
    monitors: { offchain: [], onchain: [], publishers: [], funding: [], vaults: [], ...monitors },
    state: { dir: tempDir("state") },
    log: { level: "warn" },
  };
}
