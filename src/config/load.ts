// Load the configuration: defaults < config/default.json < --config file < env (PM_*) < flags, strictly validated.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { RULE_KINDS } from "../domain/events.js";
import { errorCode } from "../domain/errors.js";
import type { EnvRecord } from "./fields.js";
import { readMaintenance } from "./maintenance.js";
import { MONITOR_ARRAYS, readMonitors } from "./monitors.js";
import { defaultConfigPath } from "./package-root.js";
import { configError, parseConvictMessage, unknownKey, type ConfigProblem } from "./problems.js";
import { redactConfig } from "./redact.js";
import { readRules } from "./rules/index.js";
import { configSchema, createConvict, type ConfigValues } from "./schema.js";
import { isLeaf, leaves, type SchemaSection } from "./schema-node.js";
import { readSinks } from "./sinks.js";
import type { AppConfig, MonitorsConfig } from "./types.js";

/** Inputs of loadConfig; nothing is read from `process` here. */
export interface LoadConfigOptions {
  /** `--config FILE` (relative to cwd). */
  readonly configFile?: string;
  readonly env: EnvRecord;
  /** Dotted keys from `--set key=value` flags, e.g. {"server.port": "0"}. */
  readonly argvOverrides?: Readonly<Record<string, string>>;
  /** Base of relative paths (config file, state.dir); default: the process's working directory. */
  readonly cwd?: string;
  /** Override of the bundled config/default.json (tests); null = skip that layer. */
  readonly defaultFile?: string | null;
}

/** The validated, frozen configuration, a redacted view for display, and the layers that built it. */
export interface LoadedConfig {
  readonly config: AppConfig;
  redacted(): Record<string, unknown>;
  readonly sources: readonly string[];
}

const LEAVES = new Map(leaves(configSchema));

/** Load, merge and validate every layer; throws PmError PM_ERR_CONFIG listing every problem as `key: reason`. */
export function loadConfig(options: LoadConfigOptions): LoadedConfig {
  const cwd = resolve(options.cwd ?? ".");
  const env = options.env;
  const problems: ConfigProblem[] = [];
  const sources = ["defaults"];
  const conf = createConvict(env);

  const defaultFile = options.defaultFile === undefined ? defaultConfigPath() : options.defaultFile;
  if (defaultFile !== null) {
    conf.load(readLayer(defaultFile, problems));
    sources.push(defaultFile);
  }
  let userFile: Record<string, unknown> = {};
  if (options.configFile !== undefined) {
    const path = resolve(cwd, options.configFile);
    userFile = readLayer(path, problems);
    conf.load(userFile);
    sources.push(path);
  }
  const envNames = [...LEAVES.values()].map((l) => l.env).filter((name) => env[name] !== undefined);
  if (envNames.length > 0) sources.push(`env (${envNames.join(", ")})`);

  const flags = Object.entries(options.argvOverrides ?? {});
  for (const [key, value] of flags) {
    if (LEAVES.has(key))
      conf.set(key, value); // convict coerces the text per the key's format
    else problems.push({ key, reason: unknownKey(key, [...LEAVES.keys()]) });
  }
  if (flags.length > 0) sources.push(`flags (${flags.map(([k]) => k).join(", ")})`);

  const stateDirSet =
    env["PM_STATE_DIR"] !== undefined ||
    options.argvOverrides?.["state.dir"] !== undefined ||
    hasStateDir(userFile);
  const systemdDir = env["STATE_DIRECTORY"]?.split(":")[0];
  if (!stateDirSet && systemdDir !== undefined && systemdDir !== "") {
    conf.set("state.dir", systemdDir);
    sources.push("env (STATE_DIRECTORY)");
  }

  try {
    conf.validate({ allowed: "strict" });
  } catch (error) {
    problems.push(...parseConvictMessage(error instanceof Error ? error.message : String(error)));
  }

  const values = conf.getProperties();
  // Arrays are validated once, here, with env secrets resolved; convict passed their JSON through.
  const config: AppConfig = {
    ...values,
    monitors: readMonitorArrays(values.monitors, problems),
    rules: readRules(values.rules, problems),
    sinks: readSinks(values.sinks, env, problems, values.grouping),
    maintenance: readMaintenance(values.maintenance, problems),
    state: { dir: resolve(cwd, values.state.dir) },
    recording: { ...values.recording, dir: resolve(cwd, values.recording.dir) },
  };
  checkSinkRuleRefs(config, problems);
  checkCluster(config, problems);
  if (problems.length > 0) throw configError(problems);

  const frozen = deepFreeze(config);
  return { config: frozen, redacted: () => redactConfig(frozen), sources };
}

/** Read one JSON layer, reporting keys outside the schema and non-object sections; throws if unreadable. */
function readLayer(path: string, problems: ConfigProblem[]): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = errorCode(error) ?? "unreadable";
    throw configError([{ key: path, reason: `cannot read config file (${code})` }], error);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const reason = `invalid JSON (${error instanceof Error ? error.message : String(error)})`;
    throw configError([{ key: path, reason }], error);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw configError([{ key: path, reason: "must contain a JSON object" }]);
  }
  return pruneUnknown(parsed as Record<string, unknown>, configSchema, "", problems);
}

/** Copy of a layer without unknown keys and malformed sections, each reported with a suggestion. */
function pruneUnknown(
  layer: Record<string, unknown>,
  section: SchemaSection,
  prefix: string,
  problems: ConfigProblem[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(layer)) {
    const key = prefix === "" ? name : `${prefix}.${name}`;
    const node = Object.hasOwn(section, name) ? section[name] : undefined;
    if (node === undefined) {
      problems.push({ key, reason: unknownKey(name, Object.keys(section)) });
    } else if (isLeaf(node)) {
      out[name] = value;
    } else if (typeof value !== "object" || value === null || Array.isArray(value)) {
      problems.push({ key, reason: "must be an object (a section of keys)" });
    } else {
      out[name] = pruneUnknown(value as Record<string, unknown>, node, key, problems);
    }
  }
  return out;
}

/** The `monitors` section with each target array read element by element. */
function readMonitorArrays(monitors: ConfigValues["monitors"], problems: ConfigProblem[]): MonitorsConfig {
  return {
    ...monitors,
    offchain: readMonitors("monitors.offchain", MONITOR_ARRAYS.offchain, monitors.offchain, problems),
    onchain: readMonitors("monitors.onchain", MONITOR_ARRAYS.onchain, monitors.onchain, problems),
    publishers: readMonitors("monitors.publishers", MONITOR_ARRAYS.publishers, monitors.publishers, problems),
    funding: readMonitors("monitors.funding", MONITOR_ARRAYS.funding, monitors.funding, problems),
    vaults: readMonitors("monitors.vaults", MONITOR_ARRAYS.vaults, monitors.vaults, problems),
  };
}

function hasStateDir(layer: Record<string, unknown>): boolean {
  const state = layer["state"];
  return typeof state === "object" && state !== null && Object.hasOwn(state, "dir");
}

/** A sink's `rules` filter must name a rule kind or a configured rule id. */
function checkSinkRuleRefs(config: AppConfig, problems: ConfigProblem[]): void {
  const known = new Set<string>([...RULE_KINDS, ...config.rules.map((r) => r.id)]);
  config.sinks.forEach((sink, i) => {
    if (sink.kind === "heartbeat") return;
    sink.rules.forEach((ref, j) => {
      if (!known.has(ref)) {
        problems.push({
          key: `sinks[${i}].rules[${j}]`,
          reason: `"${ref}" is neither a rule kind nor a configured rule id`,
        });
      }
    });
  });
}

/** Cluster mode needs its incompleteness acknowledged, and a member id NATS accepts as a key. */
function checkCluster(config: AppConfig, problems: ConfigProblem[]): void {
  const { cluster } = config;
  if (cluster.nats.servers.length > 0 && !cluster.experimental)
    problems.push({
      key: "cluster.experimental",
      reason:
        "must be true to turn cluster mode on: the targets, their alert state, the event log, the notifications (grouping too) and silences are shared, but maintenance windows and the daemon's own alerts are per member, a transition still queued for the log when its member dies is decided again (later) by the new owner, and a price move across a member's kill -9 is missed by a window shorter than the gap (docs/cluster.md)",
    });
  if (!/^[A-Za-z0-9_-]*$/.test(cluster.memberId))
    problems.push({ key: "cluster.memberId", reason: 'only letters, digits, "-" and "_"' });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
