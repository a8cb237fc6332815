// Test helpers: write a JSON config into a fresh temp dir and load it, or capture the error's problem lines.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type LoadConfigOptions, type LoadedConfig } from "../../src/config/load.js";
import { isPmError, type PmError } from "../../src/domain/errors.js";

/** Write `content` (object → JSON, string → as is) into a new temp dir; returns the file path. */
export function writeConfig(content: unknown, name = "config.json"): string {
  const dir = mkdtempSync(join(tmpdir(), "pm-config-"));
  const path = join(dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

/** Load with a user config object layered over default.json (unless options say otherwise). */
export function loadWith(content: unknown, options: Partial<LoadConfigOptions> = {}): LoadedConfig {
  return loadConfig({ env: {}, configFile: writeConfig(content), ...options });
}

/** The PM_ERR_CONFIG thrown by `load`, failing the test if it does not throw one. */
export function configErrorOf(load: () => unknown): PmError {
  try {
    load();
  } catch (error) {
    if (isPmError(error, "PM_ERR_CONFIG")) return error;
    throw error;
  }
  throw new Error("expected loadConfig to throw PM_ERR_CONFIG");
}

/** The `key: reason` lines of a config error. */
export function problemLines(load: () => unknown): string[] {
  return configErrorOf(load).message.split("\n").slice(1);
}
