// The config a backtest runs under: the file, with `--set rules.<id>.<field>=VALUE` applied to that rule and other `--set` keys as for run.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { loadConfig } from "../config/load.js";
import { defaultConfigPath } from "../config/package-root.js";
import type { AppConfig } from "../config/types.js";
import { configError } from "../config/problems.js";
import type { PmError } from "../domain/errors.js";

/** Where the config comes from. */
export interface BacktestConfigSource {
  readonly configFile?: string;
  /** `KEY=VALUE` texts of `--set`, in order. */
  readonly sets: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

/** Load and validate; throws PmError PM_ERR_CONFIG naming the key and the reason. */
export function loadBacktestConfig(source: BacktestConfigSource): AppConfig {
  const overrides: Record<string, string> = {};
  let rules: Record<string, unknown>[] | null = null;
  for (const assignment of source.sets) {
    const at = assignment.indexOf("=");
    if (at <= 0) throw configProblem("--set", `expects KEY=VALUE, got "${assignment}"`);
    const key = assignment.slice(0, at).trim();
    const value = assignment.slice(at + 1);
    const rule = /^rules\.([^.]+)\.(.+)$/.exec(key);
    if (rule === null) {
      overrides[key] = value;
      continue;
    }
    rules ??= rawRules(source);
    setRuleField(rules, rule[1] ?? "", rule[2] ?? "", value);
  }
  if (rules !== null) overrides["rules"] = JSON.stringify(rules);
  return loadConfig({
    ...(source.configFile === undefined ? {} : { configFile: source.configFile }),
    env: source.env,
    cwd: source.cwd,
    argvOverrides: overrides,
  }).config;
}

/** The rules as written: the config file's, else the bundled defaults'. */
function rawRules(source: BacktestConfigSource): Record<string, unknown>[] {
  const fromFile =
    source.configFile === undefined ? undefined : readRules(resolve(source.cwd, source.configFile));
  return fromFile ?? readRules(defaultConfigPath()) ?? [];
}

/** The `rules` array of a JSON config file (undefined when it has none). */
function readRules(path: string): Record<string, unknown>[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw configProblem(path, `cannot read config file (${error instanceof Error ? error.message : "?"})`);
  }
  const rules = (json as { rules?: unknown }).rules;
  if (!Array.isArray(rules)) return undefined;
  return rules.map((rule) => ({ ...(rule as Record<string, unknown>) }));
}

/** Set `field` of the rule whose id (or kind, when it has no id) is `id`; the value is JSON, else text. */
function setRuleField(rules: Record<string, unknown>[], id: string, field: string, text: string): void {
  const rule = rules.find((r) => (r["id"] ?? r["kind"]) === id);
  if (rule === undefined) {
    const ids = rules.map((r) => String(r["id"] ?? r["kind"])).join(", ");
    throw configProblem(`rules.${id}`, `no rule with id "${id}" (rules: ${ids})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = text;
  }
  rule[field] = value;
}

/** A config error in the loader's format. */
function configProblem(key: string, reason: string): PmError {
  return configError([{ key, reason }]);
}
