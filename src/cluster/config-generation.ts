// The config generation shared through NATS KV: the config loaded last by any member (start or reload) is the
// cluster's generation; a member whose own config differs from it says so in /api/v1/status.
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import { z } from "zod";
import type { AppConfig } from "../config/types.js";
import { casOrNull, type SharedBuckets } from "./shared-buckets.js";

/** The one key of the config bucket. */
const GENERATION_KEY = "generation";

/** The cluster's generation as stored: its number, the config's hash, and who loaded it when. */
export interface GenerationRecord {
  readonly generation: number;
  readonly hash: string;
  readonly memberId: string;
  readonly atMs: number;
}

const GENERATION_RECORD = z.object({
  generation: z.number().int().nonnegative(),
  hash: z.string(),
  memberId: z.string(),
  atMs: z.number(),
});

/** The config generation as a member reports it. */
export interface ConfigGenerationView {
  /** The cluster's generation (null until read from NATS). */
  readonly generation: number | null;
  /** The hash of this member's config, and of the cluster's. */
  readonly hash: string;
  readonly clusterHash: string | null;
  /** Whether this member runs the cluster's config (null until read). */
  readonly current: boolean | null;
  /** Who loaded the cluster's config last. */
  readonly loadedBy: string | null;
}

/**
 * The hash of what every member must share: monitors, rules, alert settings, maintenance windows and sinks
 * (not `server`, `state`, `cluster` or `log`, which differ from member to member). 16 hex digits.
 */
export function configHash(config: AppConfig): string {
  const shared = {
    monitors: config.monitors,
    rules: config.rules,
    alerts: config.alerts,
    maintenance: config.maintenance,
    sinks: config.sinks,
  };
  return createHash("sha256").update(JSON.stringify(shared)).digest("hex").slice(0, 16);
}

/**
 * What to write after a member loaded a config with `hash`: nothing when the cluster already runs it, the first
 * record (generation 0) when there is none, else the next generation.
 */
export function nextGenerationRecord(
  current: GenerationRecord | null,
  loaded: { readonly hash: string; readonly memberId: string; readonly atMs: number },
): GenerationRecord | null {
  if (current === null) return { generation: 0, ...loaded };
  if (current.hash === loaded.hash) return null;
  return { generation: current.generation + 1, ...loaded };
}

/** What the shared generation needs from cluster mode. */
export interface ConfigGenerationDeps {
  readonly buckets: () => SharedBuckets | undefined;
  /** The hash of the config in force on this member. */
  readonly hash: () => string;
  readonly memberId: string;
  readonly nowMs: () => number;
  readonly logger: Logger;
}

/** The shared config generation as one member keeps it. */
export interface ConfigGeneration {
  /** This member loaded a config (start, reload): it becomes the cluster's unless the cluster runs it already. */
  loaded(): void;
  view(): ConfigGenerationView;
  /** Write what was loaded and read the cluster's every `intervalMs`. */
  start(intervalMs: number): void;
  stop(): void;
}

/** Create it; `loaded()` is pending from the start (the config the member started with). */
export function createConfigGeneration(deps: ConfigGenerationDeps): ConfigGeneration {
  let record: GenerationRecord | null = null;
  let pending = true;
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  const pass = async (): Promise<void> => {
    const buckets = deps.buckets();
    if (buckets === undefined || running) return;
    running = true;
    try {
      record = await sync(deps, buckets, pending);
      pending = pending && record?.hash !== deps.hash();
    } catch (error) {
      deps.logger.warn({ err: error }, "cluster: cannot read or write the config generation in NATS");
    } finally {
      running = false;
    }
  };
  return {
    loaded() {
      pending = true;
      void pass();
    },
    view() {
      const hash = deps.hash();
      return {
        generation: record?.generation ?? null,
        hash,
        clusterHash: record?.hash ?? null,
        current: record === null ? null : record.hash === hash,
        loadedBy: record?.memberId ?? null,
      };
    },
    start(intervalMs) {
      timer = setInterval(() => void pass(), intervalMs).unref();
      void pass();
    },
    stop() {
      clearInterval(timer);
    },
  };
}

/** Read the record; when `write`, make this member's config the cluster's (compare-and-set; a lost race re-reads). */
async function sync(
  deps: ConfigGenerationDeps,
  buckets: SharedBuckets,
  write: boolean,
): Promise<GenerationRecord | null> {
  const entry = await buckets.config.get(GENERATION_KEY);
  const parsed = entry?.operation === "PUT" ? GENERATION_RECORD.safeParse(safeJson(entry.string())) : null;
  const current = parsed?.success === true ? parsed.data : null;
  if (!write) return current;
  const next = nextGenerationRecord(current, {
    hash: deps.hash(),
    memberId: deps.memberId,
    atMs: deps.nowMs(),
  });
  if (next === null) return current;
  const value = new TextEncoder().encode(JSON.stringify(next));
  const revision = await casOrNull(() =>
    entry === null
      ? buckets.config.create(GENERATION_KEY, value)
      : buckets.config.update(GENERATION_KEY, value, entry.revision),
  );
  if (revision === null) return current;
  deps.logger.info({ generation: next.generation, hash: next.hash }, "cluster: config generation advanced");
  return next;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
